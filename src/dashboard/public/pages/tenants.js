import { html, useState } from "../vendor/preact-htm.js";
import { api, qs } from "../api.js";
import { useHashQuery } from "../route.js";
import { useLoad, useAction, Loaded, Empty, ErrorNote, Field, Pager, PageTitle, fmtDate } from "../ui.js";

/** A tenant made by the developer: any sign-up mode, optionally already verified. */
function CreateTenant({ app }) {
  const act = useAction();
  const [open, setOpen] = useState(false);
  const submit = (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    act.run(async () => {
      const password = String(f.get("password") ?? "");
      const { tenant } = await api("POST", `admin/apps/${app.id}/tenants`, { email: String(f.get("email")).trim(), ...(password ? { password } : {}), verified: f.get("verified") === "on" });
      location.hash = `#/apps/${app.id}/tenants/${tenant.id}`;
    });
  };
  if (!open) return html`<div class="row"><button type="button" onClick=${() => setOpen(true)}>Create a tenant…</button></div>`;
  return html`<form class="card" onSubmit=${submit} aria-label="Create a tenant">
    <h2>Create a tenant</h2>
    <div class="grid">
      <${Field} label="Email"><input name="email" type="email" required autocomplete="off" /><//>
      <${Field} label="Password" hint="Optional: empty, the tenant sets one with “forgot password”."><input name="password" type="password" autocomplete="new-password" minlength="8" /><//>
    </div>
    <label class="check"><input type="checkbox" name="verified" /> The address is verified (no verification email is sent)</label>
    <${ErrorNote} error=${act.error} field=${act.error?.code === "email_exists" ? "email" : undefined} />
    <div class="row"><button type="submit" class="primary" disabled=${act.busy}>Create tenant</button><button type="button" onClick=${() => setOpen(false)}>Cancel</button></div>
  </form>`;
}

const LIMIT = 25;

const VIEW = { email: "", verified: "", plan: "", createdFrom: "", createdTo: "", sort: "-createdAt", offset: 0 };

/** Search, filter, sort and page through the app's tenants (all on the server; the view is in the URL). */
export function TenantsPage({ app }) {
  const [query, setQuery] = useHashQuery(VIEW);
  // The plan filter's options load when that box is first used (or a plan is already chosen):
  // a page load stays within its few requests.
  const [wantPlans, setWantPlans] = useState(Boolean(query.plan));
  const plans = useLoad(() => (wantPlans ? api("GET", `admin/apps/${app.id}/plans?archived=true`) : Promise.resolve({ plans: [] })), [app.id, wantPlans]);
  const tenants = useLoad(() => api("GET", `admin/apps/${app.id}/tenants${qs({ ...query, limit: LIMIT })}`), [app.id, query], app.id);
  const submit = (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    setQuery({ ...Object.fromEntries(f), offset: 0 });
  };
  const filtered = query.email || query.verified || query.plan || query.createdFrom || query.createdTo;
  return html`<div class="stack">
    <${PageTitle} title=${`Tenants · ${app.name}`}>Tenants<//>
    <${CreateTenant} app=${app} />
    <form class="card filters" role="search" aria-label="Find tenants" onSubmit=${submit}>
      <${Field} label="Email contains"><input name="email" type="search" value=${query.email} placeholder="alice@" /><//>
      <${Field} label="Verified">
        <select name="verified" value=${query.verified}><option value="">Any</option><option value="true">Verified</option><option value="false">Not verified</option></select>
      <//>
      <${Field} label="Plan">
        <select name="plan" value=${query.plan} onFocus=${() => setWantPlans(true)} onPointerDown=${() => setWantPlans(true)}>
          <option value="">Any</option>
          ${(plans.data?.plans ?? []).map((p) => html`<option value=${p.id} selected=${p.id === query.plan}>${p.name}</option>`)}
        </select>
      <//>
      <${Field} label="Created from"><input name="createdFrom" type="date" value=${query.createdFrom} /><//>
      <${Field} label="Created before"><input name="createdTo" type="date" value=${query.createdTo} /><//>
      <${Field} label="Sort">
        <select name="sort" value=${query.sort}>
          <option value="-createdAt">Newest first</option><option value="createdAt">Oldest first</option>
          <option value="email">Email A–Z</option><option value="-email">Email Z–A</option>
        </select>
      <//>
      <button type="submit" class="primary">Search</button>
    </form>
    <${Loaded} state=${tenants}>${(d) =>
      d.tenants.length === 0
        ? html`<${Empty}>${filtered
            ? html`<p>No tenant matches these filters. Loosen them, or clear the email box.</p>`
            : html`<p>No tenants yet. They appear here when people sign up through your app (POST /api/v1/auth/signup with the publishable key).</p>`}<//>`
        : html`<div class="table-wrap"><table>
            <caption class="sr-only">Tenants</caption>
            <thead><tr><th scope="col">Email</th><th scope="col">Verified</th><th scope="col">Created</th></tr></thead>
            <tbody>${d.tenants.map(
              (t) => html`<tr key=${t.id}>
                <td><a href=${`#/apps/${app.id}/tenants/${t.id}`}>${t.email}</a></td>
                <td>${t.emailVerifiedAt ? "Yes" : "No"}</td>
                <td>${fmtDate(t.createdAt)}</td>
              </tr>`,
            )}</tbody>
          </table></div>
          <${Pager} total=${d.total} limit=${LIMIT} offset=${d.offset} loading=${tenants.loading} onPage=${(offset) => setQuery({ ...query, offset })} />`}<//>
  </div>`;
}
