import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, useAction, ErrorNote, Field, Confirm, fmtDate } from "../ui.js";

const SOURCE = { billing_provider: "paid subscription", gift: "gift", trial: "trial", family: "family plan" };

function Entitlements({ entitlements }) {
  const keys = Object.keys(entitlements);
  if (keys.length === 0) return html`<p class="empty" data-testid="entitlements">No entitlements: the app's defaults grant nothing.</p>`;
  return html`<dl class="facts" data-testid="entitlements">${keys.map((k) => html`<dt><code>${k}</code></dt><dd>${String(entitlements[k])}</dd>`)}</dl>`;
}

/** Subscription with its source, entitlements, usage; gift, trial and revoking a gift. */
export function BillingCard({ app, base, billing, onChanged }) {
  const plans = useLoad(() => api("GET", `admin/apps/${app.id}/plans?archived=true`), [app.id]);
  const gift = useAction();
  const trial = useAction();
  const [confirm, setConfirm] = useState(false);
  const sub = billing.subscription;
  const hasGift = billing.sources.some((s) => s.source === "gift");
  const giveGift = (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const until = f.get("until");
    gift.run(async () => {
      await api("POST", `${base}/billing/gift`, { planId: f.get("planId"), ...(until ? { expiresAt: new Date(`${until}T23:59:59Z`).toISOString() } : {}) });
      onChanged();
    });
  };
  const giveTrial = (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    trial.run(async () => {
      await api("POST", `${base}/billing/trial`, { planId: f.get("planId"), days: Number(f.get("days")) });
      onChanged();
    });
  };
  const revoke = async () => {
    await api("DELETE", `${base}/billing/gift`);
    setConfirm(false);
    onChanged();
  };
  const planOptions = (plans.data?.plans ?? []).map((p) => html`<option value=${p.id}>${p.name}${p.archived ? " (archived)" : ""}</option>`);
  const noPlans = plans.data && plans.data.plans.length === 0;
  return html`<div class="card">
    <h2>Subscription and entitlements</h2>
    <p data-testid="subscription">${sub
      ? html`<strong>${sub.planName}</strong> — ${sub.status}, from ${SOURCE[sub.source] ?? sub.source}${sub.giftExpiresAt ? `, until ${fmtDate(sub.giftExpiresAt)}` : ""}${sub.trialUntil ? `, trial until ${fmtDate(sub.trialUntil)}` : ""}${sub.familyOwnerEmail ? ` (owner ${sub.familyOwnerEmail})` : ""}`
      : "No subscription: the app's default entitlements apply."}</p>
    <${Entitlements} entitlements=${billing.entitlements} />
    ${billing.sources.length > 1 ? html`<p class="muted">Other sources: ${billing.sources.map((s) => `${SOURCE[s.source] ?? s.source} (${s.plan?.name ?? "deleted plan"}, ${s.status})`).join("; ")}</p>` : null}
    ${billing.usage.length
      ? html`<h3>Usage</h3><div class="table-wrap"><table><thead><tr><th scope="col">Feature</th><th scope="col">Period</th><th scope="col">Used</th><th scope="col">Limit</th></tr></thead>
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
            ${hasGift ? html` <button type="button" class="danger" onClick=${() => setConfirm(true)}>Revoke gift</button>` : null}
          </form>
          <form onSubmit=${giveTrial} aria-label="Start a trial">
            <h3>Start a trial</h3>
            <${Field} label="Trial plan"><select name="planId" required>${planOptions}</select><//>
            <${Field} label="Days"><input type="number" name="days" min="1" step="1" value="14" required /><//>
            <${ErrorNote} error=${trial.error} />
            <button type="submit" disabled=${trial.busy}>Start trial</button>
          </form>
        </div>`}
    ${confirm ? html`<${Confirm} title="Revoke the gift?" body="The tenant loses the gifted plan's entitlements at once." action="Revoke gift" onConfirm=${revoke} onCancel=${() => setConfirm(false)} />` : null}
  </div>`;
}
