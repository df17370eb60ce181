import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, useAction, Loaded, ErrorNote, Field, Notice, PageTitle } from "../ui.js";

const KIND = { verify: "Verification", reset: "Password reset" };
const LANGUAGE = { en: "English", es: "Español", nl: "Nederlands" };

/** The app's emails: each template in each language with its name and links, and a test send. */
export function EmailPage({ app }) {
  const state = useLoad(() => api("GET", `admin/apps/${app.id}/email/previews`), [app.id]);
  const [shown, setShown] = useState("verify-en");
  const [sent, setSent] = useState(null);
  const send = useAction();
  const submit = (e) => {
    e.preventDefault();
    const to = String(new FormData(e.target).get("to")).trim();
    setSent(null);
    send.run(async () => {
      const r = await api("POST", `admin/apps/${app.id}/email/test`, { to });
      setSent(r.transport === "outbox" ? `Test email written to the development outbox for ${r.to}.` : `Test email handed to ${r.transport.toUpperCase()} for ${r.to}.`);
    });
  };
  return html`<div class="stack">
    <${PageTitle} title=${`Email · ${app.name}`}>Email<//>
    <${Loaded} state=${state}>${(d) => {
      const current = d.previews.find((p) => `${p.kind}-${p.locale}` === shown) ?? d.previews[0];
      return html`<form class="card" onSubmit=${submit} aria-label="Send a test email">
          <h2>Send a test email</h2>
          <p class="muted">Through this server's transport (${d.transport}), from ${d.from}, now: a failure shows here.</p>
          <${Field} label="Send to"><input name="to" type="email" required autocomplete="email" /><//>
          <${ErrorNote} error=${send.error} field="to" />
          <${Notice}>${sent}<//>
          <button type="submit" class="primary" disabled=${send.busy}>${send.busy ? "Sending…" : "Send test email"}</button>
        </form>
        <div class="card">
          <h2>Templates</h2>
          <${Field} label="Template">
            <select name="template" value=${shown} onChange=${(e) => setShown(e.target.value)}>
              ${d.previews.map((p) => html`<option value=${`${p.kind}-${p.locale}`}>${KIND[p.kind]} · ${LANGUAGE[p.locale]}</option>`)}
            </select>
          <//>
          <dl class="facts" data-testid="email-preview">
            <dt>Subject</dt><dd>${current.subject}</dd>
            <dt>Link</dt><dd><code>${current.link}</code></dd>
          </dl>
          <pre class="email-text" lang=${current.locale}>${current.text}</pre>
          <p class="muted">The link's <code>PREVIEW-TOKEN</code> is a real token in a real email. Links and the app name come from Settings → Email.</p>
        </div>`;
    }}<//>
  </div>`;
}
