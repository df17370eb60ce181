import { html, useState, useEffect } from "../vendor/preact-htm.js";
import { api, qs } from "../api.js";
import { useHashQuery } from "../route.js";
import { useLoad, Loaded, Empty, Field, Pager, ErrorNote, PageTitle, Confirm, Notice, fmtDate } from "../ui.js";
import { NewRecord, RecordForm, mergePatchFor } from "./record-editor.js";

/** One record: its data, and editing or deleting it. */
function RecordItem({ base, record, onChanged, onConfirm }) {
  const [editing, setEditing] = useState(false);
  const path = `${base}/${encodeURIComponent(record.id)}`;
  return html`<li class="card">
    <p><code>${record.id}</code> <span class="muted">created ${fmtDate(record.createdAt)}, updated ${fmtDate(record.updatedAt)}</span></p>
    ${editing
      ? html`<${RecordForm} label=${`Data of ${record.id}`} initial=${JSON.stringify(record.data, null, 2)} submitLabel="Save record" onCancel=${() => setEditing(false)}
          onSave=${async (data) => {
            await api("PUT", path, { data: mergePatchFor(record.data, data) });
            setEditing(false);
            onChanged(`Record ${record.id} saved.`);
          }} />`
      : html`<pre class="json">${JSON.stringify(record.data, null, 2)}</pre>
        <div class="row">
          <button type="button" class="small" aria-label=${`Edit ${record.id}`} onClick=${() => setEditing(true)}>Edit</button>
          <button type="button" class="small danger" aria-label=${`Delete ${record.id}`}
            onClick=${() => onConfirm({ title: `Delete record ${record.id}?`, body: "The record is removed at once; there is no undo.", action: "Delete record",
              run: async () => (await api("DELETE", path), onChanged(`Record ${record.id} deleted.`)) })}>Delete…</button>
        </div>`}
  </li>`;
}

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
  const [notice, setNotice] = useState(null);
  const [confirm, setConfirm] = useState(null);
  const changed = (message) => {
    setConfirm(null);
    setNotice(message);
    state.reload();
  };
  // Deletes exactly the selection shown: the server refuses if its size changed since.
  const bulkDelete = (total) =>
    setConfirm({
      title: `Delete ${total.toLocaleString()} record${total === 1 ? "" : "s"}?`,
      body: query.filter ? `Every record of ${collection} matching ${query.filter} is deleted, not just this page. There is no undo.` : `Every record of ${collection} is deleted, not just this page. There is no undo.`,
      typed: String(total),
      action: "Delete records",
      run: async () => {
        const { deleted } = await api("POST", `${base}/bulk-delete`, { filter: query.filter || undefined, confirm: total });
        changed(`${deleted.toLocaleString()} record${deleted === 1 ? "" : "s"} deleted.`);
      },
    });
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
    <${NewRecord} base=${base} collection=${collection} onCreated=${(r) => changed(`Record ${r.id} created.`)} />
    <${Notice}>${notice}<//>
    ${confirm ? html`<${Confirm} title=${confirm.title} body=${confirm.body} typed=${confirm.typed} action=${confirm.action} onConfirm=${confirm.run} onCancel=${() => setConfirm(null)} />` : null}
    ${state.error ? null : html`<${Loaded} state=${state}>${(d) =>
      d.records.length === 0
        ? html`<${Empty}><p>${query.filter ? "No record matches this filter." : "This collection is empty."}</p><//>`
        : html`<div class="row spread"><p class="muted" data-testid="record-total">${d.total.toLocaleString()} record${d.total === 1 ? "" : "s"}</p>
            <button type="button" class="danger" onClick=${() => bulkDelete(d.total)}>Delete ${query.filter ? "all matching" : "all"} (${d.total.toLocaleString()})…</button></div>
          <ol class="records">${d.records.map((r) => html`<${RecordItem} key=${r.id + r.updatedAt} base=${base} record=${r} onChanged=${changed} onConfirm=${setConfirm} />`)}</ol>
          <${Pager} total=${d.total} limit=${LIMIT} offset=${d.offset} loading=${state.loading} onPage=${(offset) => setQuery({ ...query, offset })} />`}<//>`}
  </div>`;
}
