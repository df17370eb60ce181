import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, useAction, Loaded, ErrorNote, Empty, Field, Confirm, PageTitle } from "../ui.js";

// Patterns are compiled with the `v` flag: a literal "-" in a class must be escaped.
const KEY_PATTERN = "[A-Za-z0-9_.:\\-]{1,64}";
const SLUG_PATTERN = "[a-z0-9\\-]+";

export const toRows = (entitlements) => Object.entries(entitlements).map(([key, value]) => ({ key, type: typeof value === "boolean" ? "boolean" : "number", value: String(value) }));
export const fromRows = (rows) => {
  const out = {};
  for (const r of rows) if (r.key.trim()) out[r.key.trim()] = r.type === "boolean" ? r.value === "true" : Number(r.value);
  return out;
};

/** Typed editor: each entitlement is a key with a boolean or a number. */
export function EntitlementsEditor({ rows, onChange, idPrefix }) {
  const set = (i, patch) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return html`<fieldset class="entitlements">
    <legend>Entitlements</legend>
    ${rows.length === 0 ? html`<p class="muted">None: add a feature key such as <code>pro</code> (yes/no) or <code>projects</code> (a number).</p>` : null}
    ${rows.map(
      (r, i) => html`<div class="row ent" key=${i}>
        <${Field} label="Key"><input name=${`${idPrefix}-key-${i}`} value=${r.key} onInput=${(e) => set(i, { key: e.target.value })} pattern=${KEY_PATTERN} required /><//>
        <${Field} label="Type">
          <select name=${`${idPrefix}-type-${i}`} value=${r.type} onChange=${(e) => set(i, { type: e.target.value, value: e.target.value === "boolean" ? "true" : "0" })}>
            <option value="boolean">yes / no</option><option value="number">number</option>
          </select>
        <//>
        <${Field} label="Value">${r.type === "boolean"
          ? html`<select name=${`${idPrefix}-value-${i}`} value=${r.value} onChange=${(e) => set(i, { value: e.target.value })}><option value="true">true</option><option value="false">false</option></select>`
          : html`<input name=${`${idPrefix}-value-${i}`} type="number" min="0" step="any" value=${r.value} onInput=${(e) => set(i, { value: e.target.value })} required />`}<//>
        <button type="button" class="small" onClick=${() => onChange(rows.filter((_, j) => j !== i))} aria-label=${`Remove ${r.key || "entitlement"}`}>Remove</button>
      </div>`,
    )}
    <button type="button" class="small" onClick=${() => onChange([...rows, { key: "", type: "boolean", value: "true" }])}>Add entitlement</button>
  </fieldset>`;
}

function PlanCard({ app, plan, onChanged }) {
  const [rows, setRows] = useState(toRows(plan.entitlements));
  const [confirm, setConfirm] = useState(false);
  const act = useAction();
  const path = `admin/apps/${app.id}/plans/${plan.id}`;
  const save = (e) => {
    e.preventDefault();
    act.run(async () => {
      await api("PATCH", path, { entitlements: fromRows(rows) });
      onChanged();
    });
  };
  const archive = async () => {
    await api("POST", `${path}/archive`);
    setConfirm(false);
    onChanged();
  };
  const run = (fn) => act.run(async () => (await fn(), onChanged()));
  return html`<li class="card" key=${plan.id}>
    <h2>${plan.name} ${plan.archived ? html`<span class="badge">archived</span>` : null}</h2>
    <p class="muted"><code>${plan.slug}</code> · ${(plan.priceCents / 100).toFixed(2)} ${plan.currency.toUpperCase()} / ${plan.interval} · Stripe: ${plan.stripePriceId ?? "not synced"}</p>
    <form onSubmit=${save} aria-label=${`Entitlements of ${plan.name}`}>
      <${EntitlementsEditor} rows=${rows} onChange=${setRows} idPrefix=${plan.id} />
      <${ErrorNote} error=${act.error} />
      <div class="row">
        <button type="submit" class="primary" disabled=${act.busy}>Save entitlements</button>
        ${plan.archived
          ? html`<button type="button" onClick=${() => run(() => api("POST", `${path}/unarchive`))}>Unarchive</button>`
          : html`<button type="button" onClick=${() => setConfirm(true)}>Archive…</button>`}
        <button type="button" onClick=${() => run(() => api("POST", `${path}/sync-stripe`))}>Sync to Stripe</button>
      </div>
    </form>
    ${confirm ? html`<${Confirm} title=${`Archive ${plan.name}?`} body="It is no longer offered to new subscribers; current subscribers keep it." action="Archive" onConfirm=${archive} onCancel=${() => setConfirm(false)} />` : null}
  </li>`;
}

export function PlansPage({ app }) {
  const plans = useLoad(() => api("GET", `admin/apps/${app.id}/plans?archived=true`), [app.id]);
  const [rows, setRows] = useState([]);
  // A new key remounts the form: its fields return to their defaults after a create.
  const [formKey, setFormKey] = useState(0);
  const create = useAction();
  const submit = (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    create.run(async () => {
      await api("POST", `admin/apps/${app.id}/plans`, {
        name: f.get("name"),
        slug: f.get("slug"),
        priceCents: Math.round(Number(f.get("price")) * 100),
        currency: f.get("currency"),
        interval: f.get("interval"),
        entitlements: fromRows(rows),
      });
      setFormKey((k) => k + 1);
      setRows([]);
      plans.reload();
    });
  };
  return html`<div class="stack">
    <${PageTitle} title=${`Plans · ${app.name}`}>Plans<//>
    <${Loaded} state=${plans}>${(d) =>
      d.plans.length === 0
        ? html`<${Empty}><p>No plans yet. Create one below; tenants get its entitlements when they subscribe, or when you gift it.</p><//>`
        : html`<ul class="cards wide">${d.plans.map((p) => html`<${PlanCard} key=${p.id + p.updatedAt} app=${app} plan=${p} onChanged=${plans.reload} />`)}</ul>`}<//>
    <form class="card" key=${formKey} onSubmit=${submit} aria-label="Create a plan">
      <h2>Create a plan</h2>
      <div class="grid">
        <${Field} label="Plan name"><input name="name" required /><//>
        <${Field} label="Slug" hint="Lower-case letters, digits and dashes."><input name="slug" required pattern=${SLUG_PATTERN} /><//>
        <${Field} label="Price"><input name="price" type="number" min="0" step="0.01" value="0" required /><//>
        <${Field} label="Currency"><input name="currency" value="usd" required maxlength="3" /><//>
        <${Field} label="Interval"><select name="interval"><option value="month">month</option><option value="year">year</option></select><//>
      </div>
      <${EntitlementsEditor} rows=${rows} onChange=${setRows} idPrefix="new" />
      <${ErrorNote} error=${create.error} />
      <button type="submit" class="primary" disabled=${create.busy}>Create plan</button>
    </form>
  </div>`;
}
