import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useAction, ErrorNote, Field, FieldError } from "../ui.js";

// The records API's own limits (src/data/records.ts): checked here first so a mistake is
// named on its field before anything is sent.
const MAX_BYTES = 256 * 1024;
const MAX_DEPTH = 32;

const depth = (v) => (v !== null && typeof v === "object" ? 1 + Math.max(0, ...Object.values(v).map(depth)) : 0);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** The JSON in a record's box, checked as the server will check it. */
export function parseRecordJson(text, field = "data") {
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new FieldError(field, `Not valid JSON: ${e.message}`);
  }
  if (!isObject(data)) throw new FieldError(field, "A record's data is a JSON object, like {\"title\": \"…\"}.");
  const bytes = new TextEncoder().encode(JSON.stringify(data)).length;
  if (bytes > MAX_BYTES) throw new FieldError(field, `This record is ${bytes.toLocaleString()} bytes as JSON; a record holds at most ${MAX_BYTES.toLocaleString()} (256 KiB).`);
  if (depth(data) > MAX_DEPTH) throw new FieldError(field, `This record nests more than ${MAX_DEPTH} levels deep.`);
  return data;
}

/**
 * The JSON merge patch (RFC 7396) that turns `from` into `to`: what the records API's PUT
 * takes. Removed keys become null.
 */
export function mergePatchFor(from, to) {
  const patch = {};
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    if (isObject(value) && isObject(from[key])) {
      const inner = mergePatchFor(from[key], value);
      if (Object.keys(inner).length) patch[key] = inner;
    } else if (JSON.stringify(value) !== JSON.stringify(from[key])) patch[key] = value;
  }
  return patch;
}

/** A form with one JSON box: a new record, or an existing record's data. */
export function RecordForm({ label, initial = "{\n  \n}", submitLabel, onSave, onCancel }) {
  const [text, setText] = useState(initial);
  const act = useAction();
  const submit = (e) => {
    e.preventDefault();
    act.run(async () => {
      await onSave(parseRecordJson(text));
    });
  };
  return html`<form onSubmit=${submit} aria-label=${label} class="record-form">
    <${Field} label=${label} hint="A JSON object; at most 256 KiB and 32 levels deep.">
      <textarea name="data" class="mono" rows="8" spellcheck="false" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
    <//>
    <${ErrorNote} error=${act.error} field="data" />
    <div class="row">
      <button type="submit" class="primary" disabled=${act.busy}>${submitLabel}</button>
      ${onCancel ? html`<button type="button" onClick=${onCancel}>Cancel</button>` : null}
    </div>
  </form>`;
}

/** Creates a record for the tenant. */
export function NewRecord({ base, collection, onCreated }) {
  const [open, setOpen] = useState(false);
  const [key, setKey] = useState(0);
  if (!open) return html`<div class="row"><button type="button" onClick=${() => setOpen(true)}>New record…</button></div>`;
  return html`<div class="card">
    <${RecordForm} key=${key} label=${`New record in ${collection}`} submitLabel="Create record" onCancel=${() => setOpen(false)}
      onSave=${async (data) => {
        const { record } = await api("POST", base, { data });
        setKey((k) => k + 1);
        setOpen(false);
        onCreated(record);
      }} />
  </div>`;
}
