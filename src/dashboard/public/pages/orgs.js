import { html, useState } from "../vendor/preact-htm.js";
import { api, qs } from "../api.js";
import { useHashQuery } from "../route.js";
import { useLoad, useAction, Loaded, Empty, ErrorNote, Confirm, Pager, PageTitle, fmtDate } from "../ui.js";
import { BillingCard } from "./tenant-billing.js";

const LIMIT = 25;
const VIEW = { offset: 0 };

/** The app's organizations, newest first, a page at a time (the page is in the URL). */
export function OrgsPage({ app }) {
  const [query, setQuery] = useHashQuery(VIEW);
  const orgs = useLoad(() => api("GET", `admin/apps/${app.id}/orgs${qs({ limit: LIMIT, offset: query.offset })}`), [app.id, query], app.id);
  return html`<div class="stack">
    <${PageTitle} title=${`Organizations · ${app.name}`}>Organizations<//>
    <${Loaded} state=${orgs}>${(d) =>
      d.orgs.length === 0
        ? html`<${Empty}><p>No organizations yet. They appear here when a tenant creates one (POST /api/v1/orgs, or tenantd.orgs.create in the client).</p><//>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Organizations"><table data-testid="orgs">
            <caption class="sr-only">Organizations</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Members</th><th scope="col">Created</th></tr></thead>
            <tbody>${d.orgs.map(
              (o) => html`<tr key=${o.id}>
                <td><a href=${`#/apps/${app.id}/orgs/${o.id}`}>${o.name}</a></td>
                <td>${o.kind}</td>
                <td>${o.members.toLocaleString()}</td>
                <td>${fmtDate(o.createdAt)}</td>
              </tr>`,
            )}</tbody>
          </table></div>
          <${Pager} total=${d.total} limit=${LIMIT} offset=${d.offset} loading=${orgs.loading} onPage=${(offset) => setQuery({ offset })} />`}<//>
  </div>`;
}

const MEMBERS = 50;

/** Members in join order: the first page with the organization, the next ones on "More members". */
function Members({ app, base, first }) {
  const [pages, setPages] = useState({ members: first.members, next: first.next });
  const more = useAction();
  const loadMore = () =>
    more.run(async () => {
      const page = await api("GET", `${base}${qs({ limit: MEMBERS, after: pages.next })}`);
      setPages((p) => ({ members: [...p.members, ...page.members], next: page.next }));
    });
  return html`<div class="card">
    <h2>Members</h2>
    ${pages.members.length === 0
      ? html`<p class="empty">No members.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Members"><table data-testid="org-members">
          <caption class="sr-only">Members</caption>
          <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th></tr></thead>
          <tbody>${pages.members.map(
            (m) => html`<tr key=${m.tenantId}><td><a href=${`#/apps/${app.id}/tenants/${encodeURIComponent(m.tenantId)}`}>${m.email}</a></td><td>${m.role}</td><td>${fmtDate(m.joinedAt)}</td></tr>`,
          )}</tbody>
        </table></div>`}
    <p class="muted" aria-live="polite">${pages.members.length.toLocaleString()} shown${pages.next ? "" : ", all of them"}.</p>
    ${pages.next ? html`<div class="row"><button type="button" onClick=${loadMore} disabled=${more.busy}>${more.busy ? "Loading…" : "More members"}</button></div>` : null}
    <${ErrorNote} error=${more.error} />
  </div>`;
}

function Invites({ invites, seats }) {
  const limit = seats.limit === null ? "no seat limit" : `${seats.limit.toLocaleString()} seats`;
  return html`<div class="card">
    <h2>Invites</h2>
    <p data-testid="org-seats">${seats.used.toLocaleString()} member${seats.used === 1 ? "" : "s"}, ${seats.pending.toLocaleString()} pending email invite${seats.pending === 1 ? "" : "s"}; ${limit}${seats.remaining === null ? "" : ` (${seats.remaining.toLocaleString()} free)`}.</p>
    ${invites.length === 0
      ? html`<p class="empty">No invites.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Invites"><table>
          <caption class="sr-only">Invites</caption>
          <thead><tr><th scope="col">For</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Uses</th><th scope="col">Expires</th></tr></thead>
          <tbody>${invites.map(
            (i) => html`<tr key=${i.id}><td>${i.email ?? "Anyone with the link"}</td><td>${i.role}</td><td>${i.status}</td><td>${i.uses}</td><td>${fmtDate(i.expiresAt)}</td></tr>`,
          )}</tbody>
        </table></div>`}
  </div>`;
}

/** The app's own roles (settings.orgs.roles) beside the built-in ones. */
function Roles({ app }) {
  const custom = Object.entries(app.settings?.orgs?.roles ?? {});
  return html`<div class="card">
    <h2>Roles</h2>
    <p>Built in: <code>owner</code> (everything, and deleting or handing over the organization), <code>admin</code> (every permission), <code>member</code> (<code>records.read</code>).</p>
    ${custom.length === 0
      ? html`<p class="muted">This app defines no roles of its own: add them under <code>orgs.roles</code> in the app's settings.</p>`
      : html`<div class="table-wrap" tabindex="0" role="region" aria-label="This app's roles"><table data-testid="org-roles">
          <caption class="sr-only">This app's roles</caption>
          <thead><tr><th scope="col">Role</th><th scope="col">Permissions</th></tr></thead>
          <tbody>${custom.map(([name, role]) => html`<tr key=${name}><td><code>${name}</code></td><td>${role.permissions.length ? role.permissions.join(", ") : "none"}</td></tr>`)}</tbody>
        </table></div>`}
  </div>`;
}

const count = (n, one) => `${n.toLocaleString()} ${one}${n === 1 ? "" : "s"}`;

/** Paid seats (the Stripe quantity) beside the seats in use: a gift or trial grants a plan's entitlements, never seats. */
function BillingSeats({ subscription, seats }) {
  const paid = subscription?.seats ?? null;
  const free = seats.remaining === null ? "" : `; ${seats.remaining.toLocaleString()} free`;
  return html`<dl class="facts" data-testid="org-billing-seats">
    <dt>Paid seats</dt>
    <dd>${paid !== null
      ? `${paid.toLocaleString()} (the Stripe subscription's quantity)`
      : `None: ${seats.limit === null ? "no seat limit" : `the app's limit of ${count(seats.limit, "seat")} (orgs.seats) applies`}`}</dd>
    <dt>Seats in use</dt>
    <dd>${count(seats.used, "member")}, ${count(seats.pending, "pending email invite")}${free}</dd>
  </dl>`;
}

/** The organization's plan, seats, entitlements and usage, with the tenant page's gift and trial actions. */
function OrgBilling({ app, base, state }) {
  return html`<${Loaded} state=${state}>${(b) => html`<${BillingCard} app=${app} base=${base} billing=${b} subject="organization" title="Billing" onChanged=${state.reload}>
      <${BillingSeats} subscription=${b.subscription} seats=${b.seats} />
    <//>`}<//>`;
}

/** One organization: its facts, members, invites, the app's roles, billing, and deleting it. */
export function OrgPage({ app, orgId }) {
  const base = `admin/apps/${app.id}/orgs/${encodeURIComponent(orgId)}`;
  const state = useLoad(() => api("GET", `${base}${qs({ limit: MEMBERS })}`), [base]);
  // Asked beside the organization, not after it.
  const billing = useLoad(() => api("GET", `${base}/billing`), [base]);
  const [confirm, setConfirm] = useState(false);
  const remove = async () => {
    await api("DELETE", base);
    location.hash = `#/apps/${app.id}/orgs`;
  };
  return html`<${Loaded} state=${state}>${(d) => html`<div class="stack">
    <p class="crumbs"><a href=${`#/apps/${app.id}/orgs`}>Organizations</a> / ${d.org.name}</p>
    <div class="card">
      <${PageTitle} title=${`${d.org.name} · ${app.name}`}>${d.org.name}<//>
      <dl class="facts">
        <dt>Organization id</dt><dd><code>${d.org.id}</code></dd>
        <dt>Kind</dt><dd>${d.org.kind}</dd>
        <dt>Created</dt><dd>${fmtDate(d.org.createdAt)}</dd>
        <dt>Updated</dt><dd>${fmtDate(d.org.updatedAt)}</dd>
      </dl>
      <div class="row"><button type="button" class="danger" onClick=${() => setConfirm(true)}>Delete organization…</button></div>
    </div>
    <${Members} key=${d.org.id} app=${app} base=${base} first=${d} />
    ${d.invites ? html`<${Invites} invites=${d.invites} seats=${d.seats} />` : null}
    <${Roles} app=${app} />
    <${OrgBilling} app=${app} base=${base} state=${billing} />
    ${confirm
      ? html`<${Confirm} title="Delete this organization?" typed=${d.org.name} action="Delete organization"
          body="Removes the organization with its memberships and invites (the members' own accounts stay), fires org.deleted to your webhook and records it in the audit trail as yours. There is no undo."
          onConfirm=${remove} onCancel=${() => setConfirm(false)} />`
      : null}
  </div>`}<//>`;
}

/** On a tenant's page: the organizations the tenant belongs to, with its role in each. */
export function TenantOrgsCard({ app, tenantId }) {
  const state = useLoad(() => api("GET", `admin/apps/${app.id}/tenants/${encodeURIComponent(tenantId)}/orgs`), [app.id, tenantId]);
  return html`<div class="card">
    <h2>Organizations</h2>
    <${Loaded} state=${state}>${(d) =>
      d.orgs.length === 0
        ? html`<p class="empty">Not a member of any organization.</p>`
        : html`<ul class="plain" data-testid="tenant-orgs">${d.orgs.map((o) => html`<li key=${o.id}><a href=${`#/apps/${app.id}/orgs/${o.id}`}>${o.name}</a> — ${o.role}</li>`)}</ul>`}<//>
  </div>`;
}
