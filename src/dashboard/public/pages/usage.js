import { html } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, Loaded, PageTitle, fmtBytes, fmtDate } from "../ui.js";

/** The developer's usage this calendar month, over all their apps. */
export function UsagePage() {
  const usage = useLoad(() => Promise.all([api("GET", "developer/usage"), api("GET", "admin/apps")]), []);
  return html`<${Loaded} state=${usage}>${([u, { apps }]) => {
    const name = new Map(apps.map((a) => [a.id, a.name]));
    return html`<section class="stack">
      <${PageTitle} title="Usage" />
      <p class="muted">${fmtDate(u.period.start)} to ${fmtDate(u.period.end)} (UTC calendar month)</p>
      <dl class="facts card">
        <dt>Apps</dt><dd>${u.totals.apps}</dd><dt>Tenants</dt><dd>${u.totals.tenants.toLocaleString()}</dd>
        <dt>Records</dt><dd>${u.totals.records.toLocaleString()}</dd><dt>Stored files</dt><dd>${fmtBytes(u.totals.fileBytes)}</dd>
        <dt>Webhook deliveries this month</dt><dd>${u.totals.webhookDeliveriesThisMonth.toLocaleString()}</dd>
      </dl>
      ${u.apps.length
        ? html`<div class="table-wrap"><table><thead><tr><th scope="col">App</th><th scope="col">Tenants</th><th scope="col">Records</th><th scope="col">Files</th><th scope="col">Deliveries</th></tr></thead>
            <tbody>${u.apps.map((a) => html`<tr><td><a href=${`#/apps/${a.appId}`}>${name.get(a.appId) ?? a.appId}</a></td><td>${a.tenants}</td><td>${a.records}</td><td>${fmtBytes(a.fileBytes)}</td><td>${a.webhookDeliveriesThisMonth}</td></tr>`)}</tbody></table></div>`
        : html`<p class="empty">No apps yet: create one on the Apps page.</p>`}
    </section>`;
  }}<//>`;
}
