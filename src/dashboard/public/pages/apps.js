import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, useAction, Loaded, ErrorNote, Empty, Field, CopyButton, PageTitle } from "../ui.js";

export function AppsPage() {
  const apps = useLoad(() => api("GET", "admin/apps"), []);
  const [name, setName] = useState("");
  const create = useAction();
  const submit = (e) => {
    e.preventDefault();
    create.run(async () => {
      const { app } = await api("POST", "admin/apps", { name });
      setName("");
      location.hash = `#/apps/${app.id}`;
    });
  };
  return html`<section>
    <${PageTitle} title="Apps" />
    <${Loaded} state=${apps}>${({ apps: list }) =>
      list.length === 0
        ? html`<${Empty}><p>You have no apps yet. Create one below: it gets its own tenants, keys, plans and webhooks.</p><//>`
        : html`<ul class="cards" aria-label="Your apps">
            ${list.map(
              (a) => html`<li class="card" key=${a.id}>
                <h2><a href=${`#/apps/${a.id}`}>${a.name}</a></h2>
                <p class="muted"><code>${a.id}</code></p>
                <p>Publishable key <code>${a.publishableKey}</code> <${CopyButton} text=${a.publishableKey} label="Copy key" what=${`publishable key of ${a.name}`} /></p>
              </li>`,
            )}
          </ul>`}<//>
    <form class="card inline" onSubmit=${submit} aria-label="Create an app">
      <h2>Create an app</h2>
      <${Field} label="App name"><input name="name" required maxlength="100" value=${name} onInput=${(e) => setName(e.target.value)} /><//>
      <${ErrorNote} error=${create.error} />
      <button type="submit" class="primary" disabled=${create.busy}>Create app</button>
    </form>
  </section>`;
}
