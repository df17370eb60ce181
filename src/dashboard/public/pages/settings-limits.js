import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, Field, FieldError } from "../ui.js";
import { Section } from "./settings.js";
import { EntitlementsEditor, fromRows, toRows } from "./plans.js";
import { MAX_TRIAL_DAYS } from "./tenant-billing.js";

const MB = 1024 * 1024;

/**
 * A whole number from a form field. An empty box is never 0: it is "no cap" (null) where the
 * setting has one, else an error on that field.
 */
export function wholeNumber(f, name, label, { noCap = false, min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  const raw = String(f.get(name) ?? "").trim();
  if (raw === "") {
    if (noCap) return null;
    throw new FieldError(name, `${label}: enter a number (${min} or more).`);
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new FieldError(name, `${label}: enter a whole number from ${min} to ${max.toLocaleString()}.`);
  return n;
}

/** Per-tenant caps: empty means no cap, never 0. */
export function QuotaSettings({ app, onSaved }) {
  const s = app.settings;
  const quotas = s.quotas ?? {};
  const build = (f) => {
    const storageMb = wholeNumber(f, "storageMb", "Storage per tenant", { noCap: true });
    const recordMb = wholeNumber(f, "recordMb", "Record data per tenant", { noCap: true });
    return {
      invites: { defaultQuota: wholeNumber(f, "defaultQuota", "Invite tokens per tenant", { max: 100_000 }) },
      quotas: {
        records: wholeNumber(f, "records", "Records per tenant", { noCap: true }),
        recordBytes: recordMb === null ? null : recordMb * MB,
        storageBytes: storageMb === null ? null : storageMb * MB,
      },
    };
  };
  const cap = (v) => (v === null || v === undefined ? "" : v);
  const mb = (bytes) => (bytes === null || bytes === undefined ? "" : Math.round(bytes / MB));
  return html`<${Section} app=${app} id="s-quotas" title="Quotas" onSaved=${onSaved} build=${build}
      note="Defaults for tenants whose plan does not set them (plan entitlements records, record_bytes and storage_bytes override these).">
    <div class="grid">
      <${Field} label="Invite tokens per tenant" hint="0 turns invites off."><input name="defaultQuota" type="number" min="0" step="1" value=${s.invites?.defaultQuota ?? 5} /><//>
      <${Field} label="Records per tenant" hint="Empty: no cap."><input name="records" type="number" min="0" step="1" value=${cap(quotas.records)} /><//>
      <${Field} label="Record data per tenant (MB)" hint="The records' data as JSON, all collections. Empty: no cap."><input name="recordMb" type="number" min="0" step="1" value=${mb(quotas.recordBytes)} /><//>
      <${Field} label="Storage per tenant (MB)" hint="Empty: no cap."><input name="storageMb" type="number" min="0" step="1" value=${mb(quotas.storageBytes)} /><//>
    </div>
  <//>`;
}

/** What a tenant with no subscription gets. */
export function DefaultEntitlementSettings({ app, onSaved }) {
  const current = app.settings.billing?.defaultEntitlements ?? {};
  const [rows, setRows] = useState(toRows(current));
  const build = () => {
    const next = fromRows(rows);
    // A merge patch: keys that were removed are sent as null.
    const patch = { ...next };
    for (const key of Object.keys(current)) if (!(key in next)) patch[key] = null;
    return { billing: { defaultEntitlements: patch } };
  };
  return html`<${Section} app=${app} id="s-entitlements" title="Default entitlements" onSaved=${onSaved} build=${build}
      note="What a tenant without a subscription, gift or trial is entitled to.">
    <${EntitlementsEditor} rows=${rows} onChange=${setRows} idPrefix="default" />
  <//>`;
}

/** The trial every new tenant starts with, if any. */
export function TrialSettings({ app, onSaved }) {
  const trial = app.settings.billing?.trial;
  const plans = useLoad(() => api("GET", `admin/apps/${app.id}/plans`), [app.id]);
  const build = (f) => {
    const planId = String(f.get("trialPlan") ?? "");
    if (!planId) return { billing: { trial: null } };
    return { billing: { trial: { planId, days: wholeNumber(f, "trialDays", "Trial length", { min: 1, max: MAX_TRIAL_DAYS }) } } };
  };
  const offered = plans.data?.plans ?? [];
  return html`<${Section} app=${app} id="s-trial" title="Signup trial" onSaved=${onSaved} build=${build}
      note="A plan every new tenant gets for a few days at sign-up. Archived plans are not offered.">
    <div class="grid">
      <${Field} label="Trial plan">
        <select name="trialPlan">
          <option value="" selected=${!trial}>No signup trial</option>
          ${offered.map((p) => html`<option value=${p.id} selected=${trial?.planId === p.id || trial?.planId === p.slug}>${p.name}</option>`)}
        </select>
      <//>
      <${Field} label="Trial length (days)" hint=${`1 to ${MAX_TRIAL_DAYS}.`}><input name="trialDays" type="number" min="1" max=${MAX_TRIAL_DAYS} step="1" value=${trial?.days ?? 14} /><//>
    </div>
  <//>`;
}
