/**
 * tenantd/client: a typed client for apps. No Node-only imports: browsers, Node >= 20,
 * Deno, Bun, React Native. Docs: docs/client.md.
 */
import { createCore, type ClientOptions } from "./core.ts";
import { authApi } from "./auth.ts";
import { mfaApi } from "./mfa.ts";
import { oauthApi } from "./oauth.ts";
import { signInApi } from "./sign-in.ts";
import { batch, collectionApi, readShared } from "./data.ts";
import { filesApi } from "./files.ts";
import { billingApi } from "./billing.ts";
import { accountApi, familyApi, invitesApi } from "./account.ts";
import { orgsApi } from "./orgs.ts";
import type { BatchOperation, JsonObject, WriteOptions } from "./types.ts";
import { realtimeApi } from "./realtime.ts";

export { TenantdError } from "./errors.ts";
export { memoryStorage, localStorageAdapter, type ClientStorage } from "./storage.ts";
export type { LockManagerLike } from "./lock.ts";
export type { ClientOptions, AuthEvent, AuthListener, FlowStorage } from "./core.ts";
export type { SignUpInput } from "./auth.ts";
export type { CredentialsContainerLike, SecondFactor } from "./mfa.ts";
export type { OAuthProvider, OAuthResult, RedirectLocation, HistoryLike } from "./oauth.ts";
export type { Uploadable } from "./files.ts";
export type { UsagePeriod } from "./billing.ts";
export type { RealtimeEvent, TenantEvent, Unsubscribe, Realtime } from "./realtime.ts";
export type * from "./types.ts";
export type { Org, OrgMember, OrgMemberPage, OrgInvite, OrgInviteCreated, OrgInviteList, OrgSeats } from "./orgs.ts";
export type { OrgBilling } from "./org-billing.ts";
export type { Filter, Sort, ListOptions, Condition, Operators, FieldPath, MergePatch, TextSearch } from "./filter.ts";

export type TenantdClient = ReturnType<typeof createClient>;
export type Collection<T extends object = JsonObject> = ReturnType<typeof collectionApi<T>>;

export function createClient(options: ClientOptions) {
  const core = createCore(options);
  const realtime = realtimeApi(core);
  return {
    auth: { ...authApi(core), ...mfaApi(core, options.credentials), ...signInApi(core) },
    ...oauthApi(core),
    /** A collection of the tenant's records; `T` types each record's `data` (and the filters). */
    collection: <T extends object = JsonObject>(name: string) => collectionApi<T>(core, name, realtime),
    /** The one live stream every subscription shares: tenant events, and closing it all (docs/realtime.md). */
    realtime: { onTenantEvent: realtime.onTenantEvent, close: realtime.close },
    readShared: <T extends object = JsonObject>(token: string) => readShared<T>(core, token),
    /** Up to 100 record writes and usage increments in one transaction: all or nothing. */
    batch: (operations: BatchOperation[], opts?: WriteOptions) => batch(core, operations, opts),
    files: filesApi(core),
    billing: billingApi(core),
    account: accountApi(core),
    invites: invitesApi(core),
    family: familyApi(core),
    /** Organizations: members, roles, invites (docs/organizations.md). */
    orgs: orgsApi(core),
  };
}
