import { html, useState, useEffect, useRef } from "../vendor/preact-htm.js";
import { api, apiUrl, qs } from "../api.js";
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

const VIEW = { filter: "", sort: "", offset: 0 };

const LIVE_TEXT = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", off: "Not live: reload the page to retry" };

/**
 * The shown page kept current from the developer's live view of the collection (GET
 * …/records/{collection}/live, the same filter): on the first page of the newest-first
 * order a new record goes on top; anywhere else it is counted for the "new records" banner.
 * Changes and deletions apply to the rows shown. `reset` (the stream could not resume)
 * reloads the page.
 */
function useLiveRecords(base, query, data, reload, active) {
  // The live changes apply to the page they arrived on: new data (a reload, another page) starts over.
  const [view, setView] = useState({ from: data, value: data });
  const [fresh, setFresh] = useState(0);
  const [status, setStatus] = useState("connecting");
  const top = !query.sort && query.offset === 0;
  const topRef = useRef(top);
  topRef.current = top;
  useEffect(() => {
    setView({ from: data, value: data });
    setFresh(0);
  }, [data]);
  useEffect(() => {
    if (!active) return undefined;
    setStatus("connecting");
    const source = new EventSource(apiUrl(`${base}/live${qs({ filter: query.filter })}`));
    const on = (type, fn) => source.addEventListener(type, (e) => fn(JSON.parse(e.data)));
    const change = (fn) => setView(({ from, value }) => ({ from, value: value && fn(value) }));
    // Only a row shown moves the total: a change the page already reloaded after (the developer's own delete) is not counted twice.
    const remove = (id) => change((v) => (v.records.some((r) => r.id === id) ? { ...v, total: Math.max(0, v.total - 1), records: v.records.filter((r) => r.id !== id) } : v));
    on("ready", () => setStatus("live"));
    on("created", ({ record }) => {
      if (!topRef.current) return setFresh((n) => n + 1);
      change((v) => (v.records.some((r) => r.id === record.id) ? v : { ...v, total: v.total + 1, records: [record, ...v.records].slice(0, LIMIT) }));
    });
    on("updated", ({ record }) => change((v) => ({ ...v, records: v.records.map((r) => (r.id === record.id ? record : r)) })));
    on("deleted", ({ id }) => remove(id));
    on("left", ({ id }) => remove(id));
    on("reset", () => reload());
    on("ended", () => (source.close(), setStatus("off")));
    // The browser reconnects by itself (with Last-Event-ID) unless the server refused it.
    source.onerror = () => setStatus(source.readyState === EventSource.CLOSED ? "off" : "reconnecting");
    return () => source.close();
  }, [base, query.filter, active]);
  return { data: view.from === data ? view.value : data, fresh, status };
}

/** One collection of one tenant, with the records API's filter and sort language. */

export function RecordsPage({ app, tenantId, collection }) {
  const [query, setQuery] = useHashQuery(VIEW);
  const [filter, setFilter] = useState(query.filter);
  const [sort, setSort] = useState(query.sort);
  // Back and Forward change the applied query: the boxes follow it.
  useEffect(() => {
    setFilter(query.filter);
    setSort(query.sort);
  }, [query.filter, query.sort]);
  const base = `admin/apps/${app.id}/tenants/${encodeURIComponent(tenantId)}/records/${encodeURIComponent(collection)}`;
  const state = useLoad(() => api("GET", `${base}${qs({ filter: query.filter, sort: query.sort, limit: LIMIT, offset: query.offset })}`), [base, query], base);
  const live = useLiveRecords(base, query, state.data, state.reload, !state.error);
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
    ${state.error ? null : html`<p><span class=${`badge live-${live.status}`} data-testid="live" role="status">${LIVE_TEXT[live.status]}</span></p>`}
    ${live.fresh > 0
      ? html`<div class="warn row spread" role="status" data-testid="new-records"><span>${live.fresh.toLocaleString()} new record${live.fresh === 1 ? "" : "s"} since this page loaded.</span>
          <button type="button" class="small" onClick=${() => (query.offset === 0 ? state.reload() : setQuery({ ...query, offset: 0 }))}>Show the latest</button></div>`
      : null}
    ${state.error ? null : html`<${Loaded} state=${{ ...state, data: live.data }}>${(d) =>
      d.records.length === 0
        ? html`<${Empty}><p>${query.filter ? "No record matches this filter." : "This collection is empty."}</p><//>`
        : html`<div class="row spread"><p class="muted" data-testid="record-total">${d.total.toLocaleString()} record${d.total === 1 ? "" : "s"}</p>
            <button type="button" class="danger" onClick=${() => bulkDelete(d.total)}>Delete ${query.filter ? "all matching" : "all"} (${d.total.toLocaleString()})…</button></div>
          <ol class="records">${d.records.map((r) => html`<${RecordItem} key=${r.id} base=${base} record=${r} onChanged=${changed} onConfirm=${setConfirm} />`)}</ol>
          <${Pager} total=${d.total} limit=${LIMIT} offset=${d.offset} loading=${state.loading} onPage=${(offset) => setQuery({ ...query, offset })} />`}<//>`}
  </div>`;
}
