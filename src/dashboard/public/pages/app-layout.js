import { html } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, Loaded } from "../ui.js";
import { KeysPage } from "./keys.js";
import { SettingsPage } from "./settings.js";
import { TenantsPage } from "./tenants.js";
import { TenantPage } from "./tenant.js";
import { RecordsPage } from "./records.js";
import { PlansPage } from "./plans.js";
import { WebhooksPage } from "./webhooks.js";
import { OutboxPage } from "./outbox.js";
import { EmailPage } from "./email.js";
import { LogsPage } from "./logs.js";
import { OrgsPage, OrgPage } from "./orgs.js";

const TABS = [
  ["", "Overview"],
  ["settings", "Settings"],
  ["tenants", "Tenants"],
  ["orgs", "Organizations"],
  ["plans", "Plans"],
  ["webhooks", "Webhooks"],
  ["email", "Email"],
  ["logs", "Logs"],
];

/** One app: its tabs and the page the hash names. */
export function AppLayout({ appId, route, session }) {
  const devMode = session.devMode;
  const state = useLoad(() => api("GET", `admin/apps/${appId}`), [appId]);
  const tabs = devMode ? [...TABS, ["outbox", "Outbox"]] : TABS;
  return html`<${Loaded} state=${state}>${({ app }) => {
    const [tab = "", id, sub, collection] = route;
    let page;
    if (tab === "settings") page = html`<${SettingsPage} app=${app} session=${session} onSaved=${state.reload} />`;
    else if (tab === "tenants" && id && sub === "records" && collection) page = html`<${RecordsPage} app=${app} tenantId=${id} collection=${collection} />`;
    else if (tab === "tenants" && id) page = html`<${TenantPage} app=${app} tenantId=${id} />`;
    else if (tab === "tenants") page = html`<${TenantsPage} app=${app} />`;
    else if (tab === "orgs" && id) page = html`<${OrgPage} app=${app} orgId=${id} />`;
    else if (tab === "orgs") page = html`<${OrgsPage} app=${app} />`;
    else if (tab === "plans") page = html`<${PlansPage} app=${app} />`;
    else if (tab === "webhooks") page = html`<${WebhooksPage} app=${app} session=${session} />`;
    else if (tab === "email") page = html`<${EmailPage} app=${app} />`;
    else if (tab === "logs") page = html`<${LogsPage} app=${app} />`;
    else if (tab === "outbox" && devMode) page = html`<${OutboxPage} app=${app} />`;
    else page = html`<${KeysPage} app=${app} onChanged=${state.reload} />`;
    return html`<section>
      <p class="crumbs"><a href="#/apps">Apps</a> / <strong>${app.name}</strong></p>
      <nav class="tabs" aria-label="App sections">
        ${tabs.map(([t, label]) => html`<a href=${`#/apps/${app.id}${t ? `/${t}` : ""}`} aria-current=${t === tab ? "page" : undefined}>${label}</a>`)}
      </nav>
      ${page}
    </section>`;
  }}<//>`;
}
