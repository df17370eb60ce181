import { html, useState } from "../vendor/preact-htm.js";
import { openApiUrl as DOC } from "../api.js";
import { useLoad, Loaded, Field, PageTitle } from "../ui.js";

async function loadDoc() {
  const res = await fetch(DOC, { credentials: "same-origin" });
  if (!res.ok) throw new Error(`The OpenAPI document did not load (status ${res.status}).`);
  return res.json();
}

const METHODS = ["get", "post", "put", "patch", "delete"];

/** The API reference, rendered here from GET /api/v1/openapi.json, searchable. */
export function ApiDocsPage() {
  const state = useLoad(loadDoc, []);
  const [q, setQ] = useState("");
  return html`<section class="stack">
    <${PageTitle} title="API reference" />
    <${Loaded} state=${state}>${(doc) => {
      const ops = Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ path, method: m.toUpperCase(), ...item[m] })));
      const needle = q.trim().toLowerCase();
      const shown = needle ? ops.filter((o) => `${o.method} ${o.path} ${o.summary ?? ""} ${(o.tags ?? []).join(" ")}`.toLowerCase().includes(needle)) : ops;
      const tags = [...new Set(shown.flatMap((o) => o.tags ?? ["other"]))];
      return html`<p class="muted">${doc.info.title} ${doc.info.version}: ${ops.length} operations. The raw document: <a href=${DOC.href}>openapi.json</a>.</p>
        <${Field} label="Search operations"><input type="search" name="q" value=${q} onInput=${(e) => setQ(e.target.value)} placeholder="records, POST, webhook…" /><//>
        <p class="muted" aria-live="polite">${shown.length} shown.</p>
        ${tags.map(
          (tag) => html`<div class="card" key=${tag}>
            <h2>${tag}</h2>
            <ul class="ops">${shown.filter((o) => (o.tags ?? ["other"])[0] === tag).map(
              (o) => html`<li key=${o.method + o.path}>
                <details><summary><span class=${`method m-${o.method.toLowerCase()}`}>${o.method}</span> <code>${o.path}</code> ${o.summary}</summary>
                  ${o.description ? html`<p>${o.description}</p>` : null}
                  <p class="muted">Answers: ${Object.keys(o.responses ?? {}).join(", ")}</p>
                </details>
              </li>`,
            )}</ul>
          </div>`,
        )}`;
    }}<//>
  </section>`;
}
