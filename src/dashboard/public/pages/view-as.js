import { html, useState, useEffect } from "../vendor/preact-htm.js";
import { api, asTenant } from "../api.js";
import { useLoad, useAction, Loaded, ErrorNote, PageTitle, CopyButton, fmtDate, fmtBytes } from "../ui.js";

// Answers that mean the impersonation session is over, not that one read failed.
const OVER = new Set(["token_expired", "session_ended", "invalid_access_token"]);
const COLLECTIONS_SHOWN = 10;

/**
 * The tab "Impersonate" opens (docs/dashboard.md): a read-only session as the tenant, opened
 * here (each opening is audited), and what the tenant's own app would get from the tenant
 * API with it, under a banner that stays on screen. No write control anywhere: the server
 * refuses writes with this session in any case.
 */
export function ViewAsPage({ appId, tenantId }) {
  const admin = `admin/apps/${appId}/tenants/${encodeURIComponent(tenantId)}`;
  const state = useLoad(() => Promise.all([api("POST", `${admin}/impersonate`), api("GET", `${admin}/overview`)]), [admin]);
  return html`<${Loaded} state=${state}>${([session, overview]) => html`<${View} admin=${admin} appId=${appId} session=${session} overview=${overview} />`}<//>`;
}

function View({ admin, appId, session, overview }) {
  const [endsAt] = useState(() => new Date(Date.now() + session.expiresIn * 1000));
  const [ended, setEnded] = useState(null);
  const action = useAction();
  useEffect(() => {
    const timer = setTimeout(() => setEnded("The 15 minutes of this session are over."), session.expiresIn * 1000);
    return () => clearTimeout(timer);
  }, [session.sessionId]);
  const over = (e) => OVER.has(e.code) && setEnded("This session has ended (it expired, or the tenant's sessions were ended).");
  const endNow = () =>
    action.run(async () => {
      await api("DELETE", `${admin}/impersonate/${session.sessionId}`);
      setEnded("You ended this session: its token no longer works.");
    });
  const email = session.tenant.email;
  const read = (path, render) => html`<${Read} session=${session} path=${path} onOver=${over}>${render}<//>`;
  return html`<div class="stack view-as">
    <div class="impersonating" role="region" aria-label="Impersonation">
      <p><strong>Viewing as ${email}</strong> — read-only: the API refuses every change made with this session. ${ended ?? `Ends at ${endsAt.toLocaleTimeString()}.`}</p>
      ${ended
        ? html`<a href=${`#/apps/${appId}/tenants/${encodeURIComponent(session.tenant.id)}`}>Back to the tenant page</a>`
        : html`<button type="button" onClick=${endNow} disabled=${action.busy}>End now</button>`}
      <${ErrorNote} error=${action.error} />
    </div>
    <${PageTitle} title=${`Viewing as ${email}`} />
    ${ended
      ? html`<p class="muted">Open "Impersonate" on the tenant page again for a new session.</p>`
      : html`
    <section class="card" aria-labelledby="va-profile"><h2 id="va-profile">Profile</h2>
      ${read("auth/me", ({ tenant }) => html`<dl class="facts"><dt>Email</dt><dd>${tenant.email}</dd><dt>Email verified</dt><dd>${tenant.emailVerifiedAt ? fmtDate(tenant.emailVerifiedAt) : "Not verified"}</dd><dt>Created</dt><dd>${fmtDate(tenant.createdAt)}</dd></dl>`)}
    </section>
    <section class="card" aria-labelledby="va-billing"><h2 id="va-billing">Billing</h2>
      ${read("billing/subscription", ({ subscription }) => html`<p>${subscription ? `${subscription.planName}, ${subscription.status}${subscription.currentPeriodEnd ? ` until ${fmtDate(subscription.currentPeriodEnd)}` : ""}` : "No subscription."}</p>`)}
      ${read("billing/entitlements", ({ entitlements }) => html`<pre class="json">${JSON.stringify(entitlements, null, 2)}</pre>`)}
    </section>
    <section class="card" aria-labelledby="va-records"><h2 id="va-records">Records</h2>
      ${overview.collections.length === 0 ? html`<p class="empty">No records.</p>` : null}
      ${overview.collections.slice(0, COLLECTIONS_SHOWN).map(
        (c) => html`<h3 key=${c.collection}>${c.collection} <span class="badge">${c.count.toLocaleString()}</span></h3>
          ${read(`data/${encodeURIComponent(c.collection)}?limit=20`, ({ records }) =>
            html`<ul class="plain records-as">${records.map((r) => html`<li key=${r.id}><code>${r.id}</code><pre class="json">${JSON.stringify(r.data, null, 2)}</pre></li>`)}</ul>`)}`,
      )}
    </section>
    <section class="card" aria-labelledby="va-files"><h2 id="va-files">Files</h2>
      ${overview.files.files.length === 0
        ? html`<p class="empty">No files.</p>`
        : html`<ul class="plain">${overview.files.files.map((f) => html`<li key=${f.id}>${read(`files/${f.id}`, ({ file }) =>
            html`<a href=${file.url} target="_blank" rel="noopener noreferrer">${file.originalFilename ?? file.id}</a> <span class="muted">${file.mimeType}, ${fmtBytes(file.sizeBytes)}</span>`)}</li>`)}</ul>`}
    </section>
    <section class="card" aria-labelledby="va-activity"><h2 id="va-activity">Activity</h2>
      ${read("account/activity?limit=20", ({ activity }) =>
        html`<ul class="plain">${activity.map((a) => html`<li key=${a.id}>${fmtDate(a.at)} — <code>${a.action}</code> by ${a.actor}</li>`)}</ul>`)}
    </section>
    <section class="card" aria-labelledby="va-elsewhere"><h2 id="va-elsewhere">Use this session elsewhere</h2>
      <p>Until it ends, the same read-only token works against the tenant API from curl or your app's code: <code>Authorization: Bearer …</code> and <code>x-service-app: ${session.appId}</code>.</p>
      <${CopyButton} text=${session.accessToken} what="read-only access token" label="Copy token" />
    </section>`}
  </div>`;
}

/** One read of the tenant API as the tenant; an answer saying the session is over ends the view. */
function Read({ session, path, onOver, children }) {
  const state = useLoad(() => asTenant(session, path).catch((e) => (onOver(e), Promise.reject(e))), [session.sessionId, path]);
  return html`<${Loaded} state=${state}>${children}<//>`;
}
