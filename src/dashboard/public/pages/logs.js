import { html } from "../vendor/preact-htm.js";
import { api, qs } from "../api.js";
import { useHashQuery } from "../route.js";
import { useLoad, Loaded, Empty, Field, PageTitle, fmtDate } from "../ui.js";

const VIEW = { tab: "access", status: "" };

function AccessLog({ app, status }) {
  const state = useLoad(() => api("GET", `admin/apps/${app.id}/access-log${qs({ status, limit: 200 })}`), [app.id, status]);
  return html`<${Loaded} state=${state}>${(d) =>
    d.entries.length === 0
      ? html`<${Empty}><p>No request${status ? ` with a ${status}xx answer` : ""} for this app since this server started.</p><//>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Recent requests"><table data-testid="access-log">
          <caption class="sr-only">Recent requests</caption>
          <thead><tr><th scope="col">When</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">Time</th><th scope="col">Request id</th></tr></thead>
          <tbody>${d.entries.map(
            (e) => html`<tr key=${e.requestId}><td>${fmtDate(e.at)}</td><td><code>${e.method} ${e.route}</code></td>
              <td><span class=${`badge ${e.status >= 500 ? "status-failed" : e.status >= 400 ? "status-invalid_config" : "status-delivered"}`}>${e.status}</span></td>
              <td>${e.ms} ms</td><td><code>${e.requestId}</code></td></tr>`,
          )}</tbody></table></div>
        <p class="muted">The last ${d.kept} requests of this app on this server, kept in memory; the server's log has them all.</p>`}<//>`;
}

/** An entry's actor (`{ type, id }`) as text: "developer dev_…", "tenant tnt_…", "operator". */
const actorOf = (actor) => (actor ? [actor.type, actor.id].filter(Boolean).join(" ") : "—");

/**
 * The developer audit trail (who did what to which app or tenant, when, from where) comes
 * from GET …/audit, which a later tenantd serves: until then this tab says so, and shows
 * nothing made up.
 */
function AuditTrail({ app }) {
  const state = useLoad(() => api("GET", `admin/apps/${app.id}/audit`).catch((e) => (e.status === 404 ? { unavailable: true } : Promise.reject(e))), [app.id]);
  return html`<${Loaded} state=${state}>${(d) =>
    d.unavailable
      ? html`<${Empty}><p data-testid="audit-unavailable">This server does not keep an audit trail yet: the tab fills in once it does.</p><//>`
      : d.entries.length === 0
        ? html`<${Empty}><p>No audited action yet.</p><//>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Audit trail"><table data-testid="audit">
            <caption class="sr-only">Audit trail</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">From</th></tr></thead>
            <tbody>${d.entries.map(
              (e, i) => html`<tr key=${e.id ?? i}><td>${fmtDate(e.at)}</td><td>${actorOf(e.actor)}</td>
                <td><code>${e.action}</code></td><td>${[e.tenantId, e.target].filter(Boolean).join(" · ") || "—"}</td><td>${e.ip ?? "—"}</td></tr>`,
            )}</tbody></table></div>`}<//>`;
}

/** The app's logs: recent requests, and the audit trail. */
export function LogsPage({ app }) {
  const [query, setQuery] = useHashQuery(VIEW);
  const tab = (id, label) => html`<a href="#" role="tab" aria-selected=${query.tab === id} aria-controls="log-panel"
    onClick=${(e) => (e.preventDefault(), setQuery({ ...query, tab: id }))}>${label}</a>`;
  return html`<div class="stack">
    <${PageTitle} title=${`Logs · ${app.name}`}>Logs<//>
    <div class="tabs" role="tablist" aria-label="Logs">${tab("access", "Access log")}${tab("audit", "Audit trail")}</div>
    <div id="log-panel" role="tabpanel" class="card">
      ${query.tab === "audit"
        ? html`<${AuditTrail} app=${app} />`
        : html`<${Field} label="Status">
              <select name="status" value=${query.status} onChange=${(e) => setQuery({ ...query, status: e.target.value })}>
                <option value="">All</option><option value="2">2xx success</option><option value="4">4xx refused</option><option value="5">5xx server error</option>
              </select>
            <//>
            <${AccessLog} app=${app} status=${query.status} />`}
    </div>
  </div>`;
}
