import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, useAction, ErrorNote, Field, Confirm, Notice, fmtDate } from "../ui.js";

const DAY_MS = 24 * 3600 * 1000;
/** A trial from the dashboard lasts at most a year: a longer one is a gift. */
export const MAX_TRIAL_DAYS = 365;
const SOURCE = { billing_provider: "paid subscription", gift: "gift", trial: "trial", family: "family plan" };

function Entitlements({ entitlements }) {
  const keys = Object.keys(entitlements);
  if (keys.length === 0) return html`<p class="empty" data-testid="entitlements">No entitlements: the app's defaults grant nothing.</p>`;
  return html`<dl class="facts" data-testid="entitlements">${keys.map((k) => html`<dt><code>${k}</code></dt><dd>${String(entitlements[k])}</dd>`)}</dl>`;
}

/** What starting a trial changes, said before it happens. */
function TrialChanges({ billing, subject, plan, days, familyMembers }) {
  const current = billing.sources.find((s) => s.source === "trial");
  const above = billing.sources.filter((s) => (s.source === "billing_provider" || s.source === "gift") && s.status !== "canceled");
  const until = new Date(Date.now() + days * DAY_MS);
  return html`<ul class="plain" data-testid="trial-changes">
    <li>The ${subject} gets <strong>${plan.name}</strong>'s entitlements for ${days} day${days === 1 ? "" : "s"}, until ${until.toLocaleDateString()}.</li>
    ${current ? html`<li>It <strong>replaces</strong> the current trial of ${current.plan?.name ?? "a deleted plan"}${current.expiresAt ? ` (until ${fmtDate(current.expiresAt)})` : ""}.</li>` : null}
    ${above.length ? html`<li>A ${above.map((s) => SOURCE[s.source]).join(" and a ")} comes first: the trial applies only once ${above.length === 1 ? "it ends" : "they end"}.</li>` : null}
    ${familyMembers > 0 ? html`<li><strong>${familyMembers} family member${familyMembers === 1 ? "" : "s"}</strong> share this tenant's plan: if ${plan.name} has fewer family seats or entitlements than the plan they use now, they lose them.</li>` : null}
    <li>"End trial" takes it back at any time.</li>
  </ul>`;
}

/**
 * Subscription with its source, entitlements, usage; gift, trial (start, end) and revoking a gift.
 * A tenant's (the default) or an organization's: `base` is its admin path, whose `/billing/…`
 * routes take the same bodies, `subject` the word the sentences use, `children` its own facts.
 */
export function BillingCard({ app, base, billing, subject = "tenant", title = "Subscription and entitlements", familyMembers = 0, onChanged, children }) {
  const plans = useLoad(() => api("GET", `admin/apps/${app.id}/plans?archived=true`), [app.id]);
  const gift = useAction();
  const trial = useAction();
  const [confirm, setConfirm] = useState(null);
  const [notice, setNotice] = useState(null);
  const sub = billing.subscription;
  const hasGift = billing.sources.some((s) => s.source === "gift");
  const currentTrial = billing.sources.find((s) => s.source === "trial");
  const giveGift = (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const until = f.get("until");
    gift.run(async () => {
      await api("POST", `${base}/billing/gift`, { planId: f.get("planId"), ...(until ? { expiresAt: new Date(`${until}T23:59:59Z`).toISOString() } : {}) });
      setNotice("Plan gifted.");
      onChanged();
    });
  };
  // The trial form only asks; the confirmation says what changes and then starts it.
  const askTrial = (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const plan = offered.find((p) => p.id === f.get("planId"));
    const days = Number(f.get("days"));
    if (plan) setConfirm({ kind: "trial", plan, days });
  };
  const startTrial = async () => {
    await api("POST", `${base}/billing/trial`, { planId: confirm.plan.id, days: confirm.days });
    setConfirm(null);
    setNotice(`Trial of ${confirm.plan.name} started for ${confirm.days} day${confirm.days === 1 ? "" : "s"}.`);
    onChanged();
  };
  const endTrial = async () => {
    await api("DELETE", `${base}/billing/trial`);
    setConfirm(null);
    setNotice("Trial ended.");
    onChanged();
  };
  const revoke = async () => {
    await api("DELETE", `${base}/billing/gift`);
    setConfirm(null);
    setNotice("Gift revoked.");
    onChanged();
  };
  const all = plans.data?.plans ?? [];
  // Archived plans may still be gifted (the developer's call), but a trial is an offer.
  const offered = all.filter((p) => !p.archived);
  const planOptions = all.map((p) => html`<option value=${p.id}>${p.name}${p.archived ? " (archived)" : ""}</option>`);
  const noPlans = plans.data && all.length === 0;
  return html`<div class="card">
    <h2>${title}</h2>
    <p data-testid="subscription">${sub
      ? html`<strong>${sub.planName}</strong> — ${sub.status}, from ${SOURCE[sub.source] ?? sub.source}${sub.giftExpiresAt ? `, until ${fmtDate(sub.giftExpiresAt)}` : ""}${sub.trialUntil ? `, trial until ${fmtDate(sub.trialUntil)}` : ""}${sub.familyOwnerEmail ? ` (owner ${sub.familyOwnerEmail})` : ""}`
      : "No subscription: the app's default entitlements apply."}</p>
    ${children}
    <h3>Entitlements</h3>
    <${Entitlements} entitlements=${billing.entitlements} />
    ${billing.sources.length > 1 ? html`<p class="muted">Other sources: ${billing.sources.map((s) => `${SOURCE[s.source] ?? s.source} (${s.plan?.name ?? "deleted plan"}, ${s.status}${s.seats ? `, ${s.seats} seats` : ""})`).join("; ")}</p>` : null}
    ${billing.usage.length
      ? html`<h3>Usage</h3><div class="table-wrap" tabindex="0" role="region" aria-label="Usage"><table data-testid="usage"><caption class="sr-only">Usage</caption><thead><tr><th scope="col">Feature</th><th scope="col">Period</th><th scope="col">Used</th><th scope="col">Limit</th></tr></thead>
          <tbody>${billing.usage.map((u) => html`<tr><td><code>${u.featureKey}</code></td><td>${u.period}</td><td>${u.count}</td><td>${u.limit ?? "no limit"}</td></tr>`)}</tbody></table></div>`
      : html`<p class="muted">No usage counted this month.</p>`}
    ${noPlans
      ? html`<p class="empty">Create a plan (Plans tab) to gift one or start a trial.</p>`
      : html`<div class="grid">
          <form onSubmit=${giveGift} aria-label="Gift a plan">
            <h3>Gift a plan</h3>
            <${Field} label="Plan to gift"><select name="planId" required>${planOptions}</select><//>
            <${Field} label="Until (empty: permanent)"><input type="date" name="until" /><//>
            <${ErrorNote} error=${gift.error} />
            <button type="submit" disabled=${gift.busy}>Gift plan</button>
            ${hasGift ? html` <button type="button" class="danger" onClick=${() => setConfirm({ kind: "gift" })}>Revoke gift…</button>` : null}
          </form>
          <form onSubmit=${askTrial} aria-label="Start a trial">
            <h3>${currentTrial ? "Replace the trial" : "Start a trial"}</h3>
            ${currentTrial ? html`<p class="muted">Trial of ${currentTrial.plan?.name ?? "a deleted plan"} until ${fmtDate(currentTrial.expiresAt)}.</p>` : null}
            ${offered.length === 0
              ? html`<p class="empty">Every plan is archived: unarchive one (Plans tab) to offer a trial.</p>`
              : html`<${Field} label="Trial plan"><select name="planId" required>${offered.map((p) => html`<option value=${p.id}>${p.name}</option>`)}</select><//>
                <${Field} label="Days" hint=${`1 to ${MAX_TRIAL_DAYS}.`}><input type="number" name="days" min="1" max=${MAX_TRIAL_DAYS} step="1" value="14" required /><//>
                <${ErrorNote} error=${trial.error} />
                <button type="submit" disabled=${trial.busy}>${currentTrial ? "Replace trial…" : "Start trial…"}</button>`}
            ${currentTrial ? html` <button type="button" class="danger" onClick=${() => setConfirm({ kind: "end" })}>End trial…</button>` : null}
          </form>
        </div>`}
    <${Notice}>${notice}<//>
    ${confirm?.kind === "gift" ? html`<${Confirm} title="Revoke the gift?" body=${`The ${subject} loses the gifted plan's entitlements at once.`} action="Revoke gift" onConfirm=${revoke} onCancel=${() => setConfirm(null)} />` : null}
    ${confirm?.kind === "trial"
      ? html`<${Confirm} title=${`${currentTrial ? "Replace the trial with" : "Start a trial of"} ${confirm.plan.name}?`} action=${currentTrial ? "Replace trial" : "Start trial"}
          body=${html`<${TrialChanges} billing=${billing} subject=${subject} plan=${confirm.plan} days=${confirm.days} familyMembers=${familyMembers} />`}
          onConfirm=${startTrial} onCancel=${() => setConfirm(null)} />`
      : null}
    ${confirm?.kind === "end"
      ? html`<${Confirm} title="End the trial now?" body=${`The ${subject} loses ${currentTrial?.plan?.name ?? "the trial plan"}'s entitlements at once, unless a paid subscription or a gift gives them.`} action="End trial" onConfirm=${endTrial} onCancel=${() => setConfirm(null)} />`
      : null}
  </div>`;
}
