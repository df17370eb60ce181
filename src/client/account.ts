import type { Core } from "./core.ts";
import type { ActivityPage, ExportLinkSent, Session, FamilyConsumed, FamilyInviteCreated, FamilyInviteList, FamilyInviteRevoked, FamilyMembers, FamilyReplaced, InviteQuota, InviteTokenCreated, InviteTokenList } from "./types.ts";

const tenant = { auth: "tenant" } as const;

/** The account itself: its security activity, a download of everything it owns, deleting it. */
export function accountApi(core: Core) {
  return {
    /** The tenant's own security events, newest first; pass `nextCursor` back for older ones. */
    activity: (opts: { limit?: number; cursor?: string } = {}): Promise<ActivityPage> =>
      core.request("GET", "/api/v1/account/activity", { ...tenant, query: { limit: opts.limit, cursor: opts.cursor } }),
    /**
     * Everything the tenant owns as a ZIP (account, billing, records as JSONL, files), as the
     * server's reply: stream `response.body`, or `await response.blob()` for a download link.
     * A sensitive action: it needs a sign-in within the app's step-up window (default 10
     * minutes), else `reauthentication_required`: `auth.reauthenticate()`, then ask again.
     */
    export: (): Promise<Response> => core.request("GET", "/api/v1/account/export", { ...tenant, raw: true }),
    /**
     * The same export by a one-use, 24-hour link mailed to the account's verified address, in
     * its language. Same step-up as `export()`; `email_not_verified` until the address is
     * verified, `conflict` when the app sends its own email.
     */
    exportByEmail: (): Promise<ExportLinkSent> => core.request("POST", "/api/v1/account/export/email", { ...tenant, body: {} }),
    /** Deletes the account and everything it owns; the client signs out afterwards. */
    async delete(): Promise<void> {
      await core.request("POST", "/api/v1/tenants/me/delete", tenant);
      await core.setSession(null, "SIGNED_OUT");
    },
  };
}

/** The tenant's invite tokens (for invite-only apps). */
export function invitesApi(core: Core) {
  const base = "/api/v1/tenants/me/invite-tokens";
  return {
    /** `token.token` is the plaintext, shown this once. */
    create: (input: { note?: string; expiresInSeconds?: number } = {}): Promise<InviteTokenCreated> => core.request("POST", base, { ...tenant, body: input }),
    list: (): Promise<InviteTokenList> => core.request("GET", base, tenant),
    delete: async (id: string): Promise<InviteQuota> => (await core.request<{ quota: InviteQuota }>("DELETE", `${base}/${encodeURIComponent(id)}`, tenant)).quota,
  };
}

/** Family plans: the owner's invites and members, joining, leaving. */
export function familyApi(core: Core) {
  const me = "/api/v1/tenants/me";
  const adopt = async (tokens: { accessToken: string; refreshToken: string }, tenantInfo?: Session["tenant"]) => {
    const session: Session = { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, ...(tenantInfo ? { tenant: tenantInfo } : {}) };
    await core.setSession(session, "SIGNED_IN");
  };
  return {
    createInvite: (input: { note?: string; expiresInSeconds?: number } = {}): Promise<FamilyInviteCreated> => core.request("POST", `${me}/family-invites`, { ...tenant, body: input }),
    listInvites: (): Promise<FamilyInviteList> => core.request("GET", `${me}/family-invites`, tenant),
    revokeInvite: (id: string): Promise<FamilyInviteRevoked> => core.request("DELETE", `${me}/family-invites/${encodeURIComponent(id)}`, tenant),
    members: async (): Promise<FamilyMembers["members"]> => (await core.request<FamilyMembers>("GET", `${me}/family/members`, tenant)).members,
    removeMember: (memberTenantId: string): Promise<{ ok: true; removedMemberTenantId: string }> =>
      core.request("POST", `${me}/family/remove-member`, { ...tenant, body: { member_tenant_id: memberTenantId } }),
    leave: (): Promise<{ ok: true }> => core.request("POST", `${me}/family/leave`, { ...tenant, body: {} }),
    /**
     * Joins with a new account (signed in on `result: "new"`). `result: "email_exists"`
     * means: sign in, then call `join(token)`.
     */
    async consume(input: { token: string; email: string; password: string; locale?: string }): Promise<FamilyConsumed> {
      const reply = await core.request<FamilyConsumed>("POST", "/api/v1/auth/family-invite/consume", { auth: "key", body: input });
      if (reply.result === "new") await adopt(reply, reply.tenant);
      return reply;
    },
    /** Joins as the signed-in tenant; the session is replaced by one that names the family. */
    async join(token: string): Promise<FamilyReplaced> {
      const reply = await core.request<FamilyReplaced>("POST", `${me}/replace-with-family`, { ...tenant, body: { token } });
      await adopt(reply, (await core.getSession())?.tenant);
      return reply;
    },
  };
}
