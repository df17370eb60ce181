import type { InferOutput } from "valibot";
import type { Core } from "./core.ts";
import type { BatchOperation, BatchResult, JsonObject, WriteOptions } from "./types.ts";
import { batch, collectionApi } from "./data.ts";
// Type-only, like types.ts: the server's own response schemas.
import type * as O from "../openapi/org-operations.ts";
import { orgBillingApi } from "./org-billing.ts";

export type Org = InferOutput<typeof O.Org>;
export type OrgMember = InferOutput<typeof O.OrgMember>;
export type OrgMemberPage = InferOutput<typeof O.OrgMemberPage>;
export type OrgInvite = InferOutput<typeof O.OrgInvite>;
export type OrgInviteCreated = InferOutput<typeof O.OrgInviteCreated>;
export type OrgInviteList = InferOutput<typeof O.OrgInviteList>;
export type OrgSeats = InferOutput<typeof O.OrgSeats>;

const tenant = { auth: "tenant" } as const;

/** Organizations of the signed-in tenant (docs/organizations.md). */
export function orgsApi(core: Core) {
  const base = "/api/v1/orgs";
  const at = (orgId: string, rest = "") => `${base}/${encodeURIComponent(orgId)}${rest}`;
  const org = async (p: Promise<{ org: Org }>) => (await p).org;
  return {
    /** A new organization; the tenant is its owner. */
    create: (name: string): Promise<Org> => org(core.request("POST", base, { ...tenant, body: { name } })),
    /** The tenant's organizations, with its role in each. */
    list: async (): Promise<Org[]> => (await core.request<{ orgs: Org[] }>("GET", base, tenant)).orgs,
    get: (orgId: string): Promise<Org> => org(core.request("GET", at(orgId), tenant)),
    rename: (orgId: string, name: string): Promise<Org> => org(core.request("PATCH", at(orgId), { ...tenant, body: { name } })),
    delete: async (orgId: string): Promise<void> => void (await core.request("DELETE", at(orgId), tenant)),
    /** Hands the organization to another member; the caller stays on as admin. */
    transfer: (orgId: string, tenantId: string): Promise<Org> => org(core.request("POST", at(orgId, "/transfer"), { ...tenant, body: { tenantId } })),
    /** One page of members in join order; pass `next` back as `after` for the following page. */
    members: (orgId: string, opts: { limit?: number; after?: string } = {}): Promise<OrgMemberPage> =>
      core.request("GET", at(orgId, "/members"), { ...tenant, query: { limit: opts.limit, after: opts.after } }),
    setRole: async (orgId: string, tenantId: string, role: string): Promise<OrgMember> =>
      (await core.request<{ member: OrgMember }>("PATCH", at(orgId, `/members/${encodeURIComponent(tenantId)}`), { ...tenant, body: { role } })).member,
    removeMember: async (orgId: string, tenantId: string): Promise<void> => void (await core.request("DELETE", at(orgId, `/members/${encodeURIComponent(tenantId)}`), tenant)),
    leave: async (orgId: string): Promise<void> => void (await core.request("POST", at(orgId, "/leave"), { ...tenant, body: {} })),
    /** By email (single use, that address) or, without `email`, a link; `invite.token` is shown this once. */
    invite: (orgId: string, input: { email?: string; role?: string; expiresInSeconds?: number; locale?: string } = {}): Promise<OrgInviteCreated> =>
      core.request("POST", at(orgId, "/invites"), { ...tenant, body: input }),
    invites: (orgId: string): Promise<OrgInviteList> => core.request("GET", at(orgId, "/invites"), tenant),
    revokeInvite: async (orgId: string, inviteId: string): Promise<void> => void (await core.request("DELETE", at(orgId, `/invites/${encodeURIComponent(inviteId)}`), tenant)),
    /** Joins with an invite token as the signed-in tenant (a new person signs up with it as `inviteToken`). */
    accept: (token: string): Promise<Org> => org(core.request("POST", `${base}/invites/accept`, { ...tenant, body: { token } })),
    billing: orgBillingApi(core),
    /**
     * One of the organization's collections (declared `org` in the app settings): the same
     * surface as `collection(name)`, on the records the organization's members share. Realtime
     * subscriptions to it are not built yet: `subscribe` throws.
     */
    collection: <T extends object = JsonObject>(orgId: string, name: string) => collectionApi<T>(core, name, undefined, at(orgId, `/collections/${encodeURIComponent(name)}/records`)),
    /** Up to 100 writes to the organization's records in one transaction: all or nothing. */
    batch: (orgId: string, operations: BatchOperation[], opts?: WriteOptions): Promise<BatchResult[]> => batch(core, operations, opts, at(orgId, "/batch")),
  };
}
