import { html } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, Loaded, Empty, PageTitle, fmtDate } from "../ui.js";

/** Development mode: every email tenantd would have sent, with its link. */
export function OutboxPage({ app }) {
  const state = useLoad(() => api("GET", `admin/apps/${app.id}/outbox`), [app.id]);
  return html`<div class="stack">
    <${PageTitle} title=${`Outbox · ${app.name}`}>Development outbox<//>
    <p class="muted">In development no email leaves the server: here is each one, newest first. Configure SMTP for production.</p>
    <div class="row"><button type="button" onClick=${state.reload}>Refresh</button></div>
    <${Loaded} state=${state}>${(d) =>
      d.messages.length === 0
        ? html`<${Empty}><p>No emails yet. Sign-ups, password resets and "Resend verification" put them here.</p><//>`
        : html`<ul class="cards" data-testid="outbox">${d.messages.map(
            (m) => html`<li class="card" key=${m.id}>
              <p><strong>${m.subject}</strong></p>
              <p class="muted">To ${m.to} · ${m.kind} · ${m.locale} · ${fmtDate(m.createdAt)}</p>
              ${m.link ? html`<p><a href=${m.link} rel="noreferrer">${m.link}</a></p>` : null}
              <details><summary>Text</summary><pre>${m.text}</pre></details>
            </li>`,
          )}</ul>`}<//>
  </div>`;
}
