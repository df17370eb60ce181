import { html, useState } from "../vendor/preact-htm.js";
import { api, qs } from "../api.js";
import { useHashQuery } from "../route.js";
import { EmailDeliveryWarning } from "./email-warning.js";
import { useLoad, useAction, Loaded, ErrorNote, Empty, Field, Pager, SecretOnce, Confirm, CopyButton, PageTitle, fmtDate } from "../ui.js";

const LIMIT = 20;

const pretty = (raw) => {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
};

const STATUS = { delivered: "Delivered", failed: "Failed", invalid_config: "No URL", sending: "Sending" };

/** A delivery's status: a word and a colour, never the colour alone. */
const StatusBadge = ({ status }) => html`<span class=${`badge status-${status}`}>${STATUS[status] ?? status}</span>`;

/** One delivery opened: its outcome and the body it sent, loaded on demand (bodies stay out of the list). */
function DeliveryDetails({ app, delivery, onRedelivered }) {
  const one = useLoad(() => api("GET", `admin/apps/${app.id}/webhook-deliveries/${encodeURIComponent(delivery.id)}`), [app.id, delivery.id]);
  const again = useAction();
  const [sent, setSent] = useState(false);
  const redeliver = () =>
    again.run(async () => {
      await api("POST", `admin/apps/${app.id}/webhook-deliveries/${encodeURIComponent(delivery.id)}/redeliver`);
      setSent(true);
      onRedelivered();
    });
  return html`<dl class="facts">
    <dt>Delivery id</dt><dd><code>${delivery.id}</code></dd><dt>URL</dt><dd>${delivery.url ?? "—"}</dd><dt>Tenant</dt><dd>${delivery.tenantId ?? "—"}</dd>
    <dt>Error</dt><dd>${delivery.error ?? "none"}</dd><dt>Finished</dt><dd>${fmtDate(delivery.finishedAt)}</dd>
    <dt>Body</dt><dd><${Loaded} state=${one}>${(d) =>
      d.body === null
        ? html`<span class="muted">${d.bodyNote}</span>`
        : html`<pre class="json" data-testid="delivery-body" aria-label="Body sent">${pretty(d.body)}</pre>
            <p class="muted">Formatted for reading. The signature covers the raw text: <${CopyButton} text=${d.body} label="Copy raw body" what=${`of delivery ${delivery.id}`} /></p>
            <div class="row"><button type="button" onClick=${redeliver} disabled=${again.busy}>Send again</button>${sent ? html`<span class="ok" role="status">Queued again: a new delivery appears at the top of the log.</span>` : null}</div>
            <${ErrorNote} error=${again.error} />`}<//></dd>
  </dl>`;
}

const VIEW = { status: "", event: "", offset: 0 };
const EVENTS = ["tenant.deleted", "tenant.email.resend_verification", "webhook.test"];

function DeliveryLog({ app, tick }) {
  const [query, setQuery] = useHashQuery(VIEW);
  const [open, setOpen] = useState(null);
  const log = useLoad(() => api("GET", `admin/apps/${app.id}/webhook-deliveries${qs({ ...query, limit: LIMIT })}`), [app.id, query, tick], app.id);
  return html`<div class="card">
    <h2>Delivery log</h2>
    <div class="row">
      <${Field} label="Status">
        <select name="status" value=${query.status} onChange=${(e) => setQuery({ ...query, status: e.target.value, offset: 0 })}>
          <option value="">All</option><option value="delivered">Delivered</option><option value="failed">Failed</option>
          <option value="invalid_config">No URL configured</option><option value="sending">Sending</option>
        </select>
      <//>
      <${Field} label="Event">
        <select name="event" value=${query.event} onChange=${(e) => setQuery({ ...query, event: e.target.value, offset: 0 })}>
          <option value="">All</option>${EVENTS.map((ev) => html`<option value=${ev}>${ev}</option>`)}
        </select>
      <//>
      <button type="button" onClick=${log.reload}>Refresh</button>
    </div>
    <${Loaded} state=${log}>${(d) =>
      d.deliveries.length === 0
        ? html`<${Empty}><p>No deliveries${query.status || query.event ? " match these filters" : " yet"}. Events appear here when tenants are deleted or verification is resent; "Send test event" makes one now.</p><//>`
        : html`${d.queued ? html`<p class="muted">${d.queued} event(s) waiting to be sent.</p>` : null}
          <div class="table-wrap"><table data-testid="deliveries">
            <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Code</th><th scope="col">Time</th><th scope="col">When</th><th scope="col"><span class="sr-only">Details</span></th></tr></thead>
            <tbody>${d.deliveries.map(
              (x) => html`<tr key=${x.id}>
                <td><code>${x.event}</code></td><td><${StatusBadge} status=${x.status} /></td><td>${x.statusCode ?? "—"}</td><td>${x.durationMs === null ? "—" : `${x.durationMs} ms`}</td><td>${fmtDate(x.createdAt)}</td>
                <td><button type="button" class="small" aria-expanded=${open === x.id} aria-label=${`Details of ${x.event} delivery ${x.id}`} onClick=${() => setOpen(open === x.id ? null : x.id)}>Details</button></td>
              </tr>
              ${open === x.id
                ? html`<tr class="details"><td colspan="6"><${DeliveryDetails} app=${app} delivery=${x} onRedelivered=${() => setTimeout(log.reload, 800)} /></td></tr>`
                : null}`,
            )}</tbody>
          </table></div>
          <${Pager} total=${d.total} limit=${LIMIT} offset=${d.offset} loading=${log.loading} onPage=${(offset) => setQuery({ ...query, offset })} />`}<//>
  </div>`;
}

/** The app's webhook endpoint, its signing secret, a test event and the delivery log. */
export function WebhooksPage({ app, session }) {
  const config = useLoad(() => api("GET", `admin/apps/${app.id}/event-webhook-config`), [app.id]);
  const [secret, setSecret] = useState(null);
  const [notice, setNotice] = useState(null);
  const [confirm, setConfirm] = useState(false);
  const [tick, setTick] = useState(0);
  const act = useAction();
  const path = `admin/apps/${app.id}/event-webhook-config`;
  const save = (e) => {
    e.preventDefault();
    const url = new FormData(e.target).get("url");
    act.run(async () => {
      const r = await api("PUT", path, { url });
      setSecret(r.secret);
      setNotice(r.secret ? null : "URL saved; the signing secret is unchanged.");
      config.reload();
    });
  };
  const rotate = async () => {
    const r = await api("POST", `${path}/rotate-secret`);
    setConfirm(false);
    setSecret(r.secret);
    setNotice("Rotated: the old secret stopped signing at once. Update your receiver now.");
    config.reload();
  };
  const test = () =>
    act.run(async () => {
      await api("POST", `${path}/test`);
      setNotice("Test event queued (webhook.test): receivers ignore unknown events. See the delivery log.");
      setTimeout(() => setTick((t) => t + 1), 800);
    });
  return html`<div class="stack">
    <${PageTitle} title=${`Webhooks · ${app.name}`}>Webhooks<//>
    ${config.data ? html`<${EmailDeliveryWarning} app=${app} devMode=${false} hasWebhook=${Boolean(config.data.url)} />` : null}
    <${Loaded} state=${config}>${(c) => html`<form class="card" onSubmit=${save} aria-label="Webhook URL">
      <h2>Endpoint</h2>
      <${Field} label="Webhook URL" hint="HTTPS. tenantd signs every event (x-service-signature) with the secret."><input name="url" type="url" required value=${c.url ?? ""} placeholder="https://api.example.com/tenantd-events" /><//>
      ${c.url ? html`<p class="muted">Secret created ${fmtDate(c.secretCreatedAt)}.</p>` : null}
      ${secret ? html`<${SecretOnce} title="Webhook signing secret" value=${secret} />` : null}
      ${notice ? html`<p class="ok" role="status">${notice}</p>` : null}
      <${ErrorNote} error=${act.error} />
      <div class="row">
        <button type="submit" class="primary" disabled=${act.busy}>Save URL</button>
        ${c.url ? html`<button type="button" onClick=${() => setConfirm(true)}>Rotate secret…</button><button type="button" onClick=${test} disabled=${act.busy}>Send test event</button>` : null}
      </div>
    </form>`}<//>
    <${DeliveryLog} app=${app} tick=${tick} />
    ${confirm ? html`<${Confirm} title="Rotate the signing secret?" body="The old secret stops at once: deliveries from now on verify only with the new one." action="Rotate secret" onConfirm=${rotate} onCancel=${() => setConfirm(false)} />` : null}
  </div>`;
}
