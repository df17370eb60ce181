import { html, useState, useEffect } from "../vendor/preact-htm.js";
import { api, qs } from "../api.js";
import { useHashQuery } from "../route.js";
import { useLoad, Loaded, Empty, Field, Pager, ErrorNote, PageTitle, fmtDate } from "../ui.js";

const LIMIT = 20;
const HELPERS = [
  ["field equals", '{"status": "open"}'],
  ["range", '{"n": {"$gte": 3, "$lt": 9}}'],
  ["one of", '{"tag": {"$in": ["a", "b"]}}'],
  ["created after", '{"$createdAt": {"$gte": "2026-01-01T00:00:00Z"}}'],
];

/** One collection of one tenant, with the records API's filter and sort language. */
const VIEW = { filter: "", sort: "", offset: 0 };

export function RecordsPage({ app, tenantId, collection }) {
  const [query, setQuery] = useHashQuery(VIEW);
  const [filter, setFilter] = useState(query.filter);
  const [sort, setSort] = useState(query.sort);
  // Back and Forward change the applied query: the boxes follow it.
  useEffect(() => {
    setFilter(query.filter);
    setSort(query.sort);
  }, [query.filter, query.sort]);
  const base = `admin/apps/${app.id}/tenants/${encodeURIComponent(tenantId)}/records/${collection}`;
  const state = useLoad(() => api("GET", `${base}${qs({ filter: query.filter, sort: query.sort, limit: LIMIT, offset: query.offset })}`), [base, query], base);
  const submit = (e) => {
    e.preventDefault();
    setQuery({ filter, sort, offset: 0 });
  };
  return html`<div class="stack">
    <p class="crumbs"><a href=${`#/apps/${app.id}/tenants`}>Tenants</a> / <a href=${`#/apps/${app.id}/tenants/${tenantId}`}>tenant</a> / ${collection}</p>
    <${PageTitle} title=${`Records in ${collection} · ${app.name}`}>Records in ${collection}<//>
    <form class="card" onSubmit=${submit} aria-label="Filter records">
      <${Field} label="Filter (JSON)" hint="MongoDB style: $eq $ne $gt $gte $lt $lte $in; dotted paths; $id, $createdAt, $updatedAt name the record's own fields.">
        <input name="filter" class="mono" value=${filter} onInput=${(e) => setFilter(e.target.value)} placeholder='{"status": "open"}' />
      <//>
      <div class="row helpers" aria-label="Filter examples">
        ${HELPERS.map(([label, text]) => html`<button type="button" class="small" onClick=${() => setFilter(text)}>${label}</button>`)}
      </div>
      <${Field} label="Sort (JSON)" hint='Like {"priority": -1}; empty is newest first.'>
        <input name="sort" class="mono" value=${sort} onInput=${(e) => setSort(e.target.value)} placeholder='{"$createdAt": -1}' />
      <//>
      <${ErrorNote} error=${state.error} field=${state.error?.code === "invalid_sort" ? "sort" : "filter"} />
      <button type="submit" class="primary">Apply</button>
    </form>
    ${state.error ? null : html`<${Loaded} state=${state}>${(d) =>
      d.records.length === 0
        ? html`<${Empty}><p>${query.filter ? "No record matches this filter." : "This collection is empty."}</p><//>`
        : html`<p class="muted" data-testid="record-total">${d.total.toLocaleString()} record${d.total === 1 ? "" : "s"}</p>
          <ol class="records">${d.records.map(
            (r) => html`<li key=${r.id} class="card"><p><code>${r.id}</code> <span class="muted">created ${fmtDate(r.createdAt)}, updated ${fmtDate(r.updatedAt)}</span></p>
              <pre class="json">${JSON.stringify(r.data, null, 2)}</pre></li>`,
          )}</ol>
          <${Pager} total=${d.total} limit=${LIMIT} offset=${d.offset} loading=${state.loading} onPage=${(offset) => setQuery({ ...query, offset })} />`}<//>`}
  </div>`;
}
