import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, useAction, Loaded, ErrorNote, Empty, Confirm, PageTitle, fmtDate } from "../ui.js";
import { BillingCard } from "./tenant-billing.js";
import { FilesCard } from "./tenant-files.js";
import { SignInMethodsCard } from "./tenant-sign-in.js";
import { TenantOrgsCard } from "./orgs.js";

/** One tenant: everything about them from one API call, and the developer's actions. */
export function TenantPage({ app, tenantId }) {
  const base = `admin/apps/${app.id}/tenants/${encodeURIComponent(tenantId)}`;
  const state = useLoad(() => api("GET", `${base}/overview`), [base]);
  const [confirm, setConfirm] = useState(null);
  const [notice, setNotice] = useState(null);
  const action = useAction();
  const resend = () =>
    action.run(async () => {
      const r = await api("POST", `${base}/resend-verification`);
      setNotice(r.sentBy === "tenantd" ? "Verification email sent by tenantd." : "Verification webhook fired: your app delivers the email (tenant.email.resend_verification).");
    });
  const verify = () =>
    action.run(async () => {
      await api("POST", `${base}/verify`);
      setNotice("Email marked verified.");
      state.reload();
    });
  const setSignIn = async (enabled) => {
    const r = await api("POST", `${base}/sign-in/${enabled ? "enable" : "disable"}`);
    setConfirm(null);
    setNotice(enabled ? "Sign-in turned back on." : `Sign-in turned off: ${r.sessionsEnded} session${r.sessionsEnded === 1 ? "" : "s"} ended.`);
    state.reload();
  };
  const remove = async () => {
    await api("DELETE", base);
    location.hash = `#/apps/${app.id}/tenants`;
  };
  const endSessions = async () => {
    const { ended } = await api("POST", `${base}/sessions/end`);
    setConfirm(null);
    setNotice(`Signed out everywhere: ${ended} session${ended === 1 ? "" : "s"} ended.`);
    state.reload();
  };
  return html`<${Loaded} state=${state}>${(d) => html`<div class="stack">
    <p class="crumbs"><a href=${`#/apps/${app.id}/tenants`}>Tenants</a> / ${d.tenant.email}</p>
    <div class="card">
      <${PageTitle} title=${`${d.tenant.email} · ${app.name}`}>${d.tenant.email}<//>
      <dl class="facts">
        <dt>Tenant id</dt><dd><code>${d.tenant.id}</code></dd>
        <dt>Email verified</dt><dd data-testid="verified">${d.tenant.emailVerifiedAt ? fmtDate(d.tenant.emailVerifiedAt) : "Not verified"}</dd>
        <dt>Created</dt><dd>${fmtDate(d.tenant.createdAt)}</dd>
        <dt>Language</dt><dd>${d.tenant.locale}</dd>
        <dt>Sign-in</dt><dd data-testid="sign-in">${d.tenant.signInDisabledAt ? html`<span class="badge status-failed">Turned off</span> since ${fmtDate(d.tenant.signInDisabledAt)}` : d.tenant.hasPassword ? "Password" : "Social login only"}</dd>
      </dl>
      <div class="row">
        ${d.tenant.emailVerifiedAt ? null : html`<button type="button" onClick=${resend} disabled=${action.busy}>Resend verification</button>
          <button type="button" onClick=${verify} disabled=${action.busy}>Mark verified</button>`}
        <button type="button" onClick=${() => setConfirm("sessions")}>Sign out everywhere</button>
        ${d.tenant.signInDisabledAt
          ? html`<button type="button" onClick=${() => action.run(() => setSignIn(true))} disabled=${action.busy}>Turn sign-in back on</button>`
          : html`<button type="button" class="danger" onClick=${() => setConfirm("disable")}>Turn sign-in off…</button>`}
        <a class="button" href=${`#/view-as/${app.id}/${encodeURIComponent(d.tenant.id)}`} target="_blank" rel="noopener">Impersonate (read-only, new tab)</a>
        <button type="button" class="danger" onClick=${() => setConfirm("delete")}>Delete tenant…</button>
      </div>
      ${notice ? html`<p class="ok" role="status">${notice}</p>` : null}
      <${ErrorNote} error=${action.error} />
    </div>
    <${SignInMethodsCard} base=${base} signInDisabledAt=${d.tenant.signInDisabledAt} />
    <${BillingCard} app=${app} base=${base} billing=${d.billing} familyMembers=${d.family.members.length} onChanged=${state.reload} />
    <div class="card">
      <h2>Records</h2>
      ${d.collections.length === 0
        ? html`<p class="empty">This tenant has no records yet.</p>`
        : html`<ul class="plain">${d.collections.map(
            (c) => html`<li key=${c.collection}><a href=${`#/apps/${app.id}/tenants/${d.tenant.id}/records/${c.collection}`}>${c.collection}</a> — ${c.count.toLocaleString()} record${c.count === 1 ? "" : "s"}</li>`,
          )}</ul>`}
    </div>
    <${FilesCard} app=${app} tenantId=${d.tenant.id} base=${base} files=${d.files} onChanged=${state.reload} />
    <div class="card">
      <h2>Sessions</h2>
      ${d.sessions.length === 0
        ? html`<p class="empty">No sessions: this tenant has not signed in.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">Started</th><th scope="col">Expires</th><th scope="col">State</th></tr></thead>
            <tbody>${d.sessions.map((s) => html`<tr key=${s.id}><td>${fmtDate(s.createdAt)}</td><td>${fmtDate(s.expiresAt)}</td>
              <td>${s.active ? "Active" : s.endedAt ? `Ended (${s.endReason ?? "signed out"})` : "Expired"}</td></tr>`)}</tbody></table></div>`}
    </div>
    <div class="card">
      <h2>Invites and family</h2>
      <p>Invite tokens: ${d.invites.tokens.length} issued${d.invites.quota?.limit === null || d.invites.quota?.limit === undefined ? "" : ` (quota ${d.invites.quota.limit})`}.</p>
      ${d.invites.tokens.length ? html`<ul class="plain">${d.invites.tokens.map((t) => html`<li key=${t.id}>${t.note ?? "Invite"} — ${t.status}, expires ${fmtDate(t.expiresAt)}</li>`)}</ul>` : null}
      ${d.family.owner ? html`<p>Member of <a href=${`#/apps/${app.id}/tenants/${d.family.owner.tenantId}`}>${d.family.owner.email}</a>'s family.</p>` : null}
      ${d.family.members.length
        ? html`<p>Family members:</p><ul class="plain">${d.family.members.map((m) => html`<li key=${m.tenantId}><a href=${`#/apps/${app.id}/tenants/${m.tenantId}`}>${m.email}</a> since ${fmtDate(m.joinedAt)}</li>`)}</ul>`
        : d.family.owner ? null : html`<p class="muted">No family.</p>`}
    </div>
    <${TenantOrgsCard} app=${app} tenantId=${d.tenant.id} />
    ${confirm === "delete"
      ? html`<${Confirm} title="Delete this tenant?" typed=${d.tenant.email} action="Delete tenant"
          body="Removes the account, its records, files and sessions, cancels a paid subscription, and fires tenant.deleted (reason admin_delete) to your webhook. There is no undo."
          onConfirm=${remove} onCancel=${() => setConfirm(null)} />`
      : null}
    ${confirm === "disable"
      ? html`<${Confirm} title="Turn this tenant's sign-in off?" action="Turn sign-in off"
          body="Every session ends now, and signing in (password, social login, family join) is refused with a message saying the account's sign-in is turned off, until you turn it back on. Their records and files stay."
          onConfirm=${() => setSignIn(false)} onCancel=${() => setConfirm(null)} />`
      : null}
    ${confirm === "sessions"
      ? html`<${Confirm} title="Sign out everywhere?" body="Every session of this tenant ends at once; their apps must sign in again." action="Sign out everywhere" onConfirm=${endSessions} onCancel=${() => setConfirm(null)} />`
      : null}
  </div>`}<//>`;
}
