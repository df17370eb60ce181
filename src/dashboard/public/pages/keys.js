import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useAction, ErrorNote, CopyButton, SecretOnce, Confirm, PageTitle } from "../ui.js";

/** The app's overview: ids and keys, and deleting the app. */
export function KeysPage({ app, onChanged }) {
  const [secret, setSecret] = useState(null);
  const [confirm, setConfirm] = useState(null);
  const action = useAction();
  const rotate = () =>
    api("POST", `admin/apps/${app.id}/rotate-key`).then(() => {
      setConfirm(null);
      onChanged();
    });
  const issueSecret = () =>
    api("POST", `admin/apps/${app.id}/secret-key`).then(({ secretKey }) => {
      setConfirm(null);
      setSecret(secretKey);
      onChanged();
    });
  const remove = () => api("DELETE", `admin/apps/${app.id}`).then(() => (location.hash = "#/apps"));
  return html`<div class="stack">
    <div class="card">
      <${PageTitle} title=${`${app.name} overview`}>${app.name}<//>
      <dl class="facts">
        <dt>App id (<code>x-service-app</code>)</dt><dd><code>${app.id}</code> <${CopyButton} text=${app.id} what="app id" /></dd>
        <dt>Publishable key (<code>x-service-key</code>)</dt>
        <dd><code data-testid="publishable-key">${app.publishableKey}</code> <${CopyButton} text=${app.publishableKey} what="publishable key" /></dd>
        <dt>Secret key (<code>x-service-secret</code>)</dt>
        <dd>${app.hasSecretKey ? "Issued (only its hash is stored)" : "None yet"}</dd>
      </dl>
      <div class="row">
        <button type="button" onClick=${() => setConfirm("rotate")}>Rotate publishable key</button>
        <button type="button" onClick=${() => setConfirm("secret")}>${app.hasSecretKey ? "Replace secret key" : "Issue secret key"}</button>
      </div>
      ${secret ? html`<${SecretOnce} title="The app's secret key" value=${secret} note="Shown once: put it in your server's configuration now. It goes in x-service-secret, from your server only, never in browser code." />` : null}
      <${ErrorNote} error=${action.error} />
    </div>
    <div class="card danger-zone">
      <h2>Delete this app</h2>
      <p>Removes the app and everything in it: tenants, records, files, plans, webhooks. There is no undo.</p>
      <button type="button" class="danger" onClick=${() => setConfirm("delete")}>Delete app…</button>
    </div>
    ${confirm === "rotate"
      ? html`<${Confirm} title="Rotate the publishable key?" body="The current key stops working at once: every client using it must be updated." action="Rotate key" onConfirm=${rotate} onCancel=${() => setConfirm(null)} />`
      : null}
    ${confirm === "secret"
      ? html`<${Confirm} title="Issue a new secret key?" body=${app.hasSecretKey ? "The current secret key stops working at once." : "The key is shown once."} action="Issue key" onConfirm=${issueSecret} onCancel=${() => setConfirm(null)} />`
      : null}
    ${confirm === "delete"
      ? html`<${Confirm} title=${`Delete ${app.name}?`} body="Every tenant, record, file, plan and webhook of this app is deleted. There is no undo." typed=${app.name} action="Delete app" onConfirm=${remove} onCancel=${() => setConfirm(null)} />`
      : null}
  </div>`;
}
