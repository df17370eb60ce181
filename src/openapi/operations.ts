import * as v from "valibot";
import type { ErrorCode } from "../errors.ts";
import * as auth from "../auth/routes.ts";
import { SignupBody } from "../auth/signup.ts";
import * as admin from "../admin/routes.ts";
import { FilesQuery, RecordsQuery, TenantSearchQuery } from "../admin/tenant-routes.ts";
import { OutboxQuery, TEST_EVENT } from "../admin/tools-routes.ts";
import { AccessLogQuery, BulkDeleteBody, EmailTestBody } from "../admin/dashboard-tools.ts";
import { CreateTenantBody } from "../admin/tenant-actions.ts";
import { DataBody } from "../data/routes.ts";
import * as data from "../data/routes.ts";
import { BatchBody } from "../data/batch.ts";
import { SubscribeBody, UnsubscribeQuery } from "../realtime/routes.ts";
import { AdminLiveQuery } from "../realtime/admin-live.ts";
import { IndexesQuery } from "../data/indexes.ts";
import * as family from "../family/routes.ts";
import * as oauth from "../oauth/routes.ts";
import { PlanListQuery } from "../billing/admin-routes.ts";
import { CheckoutBody, PortalBody } from "../billing/checkout.ts";
import { GiftBody, TrialBody } from "../billing/grants.ts";
import { IncrementBody, UsageQuery } from "../billing/usage.ts";
import { CreatePlanSchema, UpdatePlanSchema } from "../billing/plans.ts";
import { ConsumeBody, ReplaceBody } from "../family/join.ts";
import { CreateInviteBody } from "../invites/shape.ts";
import { WebhookUrlBody } from "../webhooks/config.ts";
import { DeliveryListQuery } from "../webhooks/deliveries.ts";
import { DEV_PAGE_PATH } from "../billing/dev-provider.ts";
import { DEFAULT_LINK_PATHS } from "../email/tenant-email.ts";
import { BackupBody } from "../admin/backups.ts";
import * as s from "./schemas.ts";
import { MFA_OPERATIONS, SignInReply, STEP_UP_NOTE } from "./mfa-operations.ts";
import { SIGN_IN_OPERATIONS } from "./sign-in-operations.ts";
import { ORG_OPERATIONS, ORG_WEBHOOK_EVENTS, orgRecordOperations } from "./org-operations.ts";
import { ORG_BILLING_OPERATIONS } from "./org-billing-operations.ts";
import { ActivityQuery, AuditQuery } from "../audit/routes.ts";

type Schema = v.GenericSchema;
export type Security = "none" | "appKey" | "tenant" | "developer";
/** A 2xx answer: a JSON schema, or a kind of non-JSON reply. */
export type Success = Schema | "empty" | "html" | "redirect" | "binary" | "zip" | "sse";

export interface Operation {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path as the router registers it (`:param`). */
  path: string;
  tag: string;
  summary: string;
  security: Security;
  /** JSON body (valibot, the handler's own schema), a form post, or a multipart upload. */
  body?: Schema | "form" | "multipart" | "stripe";
  query?: v.ObjectSchema<v.ObjectEntries, undefined> | v.GenericSchema;
  /** Extra request headers worth naming (the app secret for a reset token in the reply). */
  headers?: { name: string; description: string }[];
  responses: Partial<Record<200 | 201 | 202 | 204 | 206 | 302 | 303, Success>>;
  /** Codes this route answers with, beyond those of its security and body. */
  errors?: ErrorCode[];
  description?: string;
}

const JSON_BODY: ErrorCode[] = ["invalid_request", "invalid_json", "unsupported_media_type", "payload_too_large"];
const BY_SECURITY: Record<Security, ErrorCode[]> = {
  none: [],
  appKey: ["unauthorized"],
  tenant: ["unauthorized", "invalid_access_token", "token_expired", "session_ended"],
  developer: ["unauthorized", "not_found"],
};

/** Every code an operation can answer with: its security's, its body's, its own, and 500. */
export function errorCodes(op: Operation): ErrorCode[] {
  const body = op.body === undefined ? [] : op.body === "stripe" ? ["invalid_request", "payload_too_large"] as ErrorCode[] : JSON_BODY;
  const query = op.query || op.path.includes(":") ? (["invalid_request"] as ErrorCode[]) : [];
  // A developer's impersonation session reads only: the tenant guard refuses its writes.
  const readOnly: ErrorCode[] = op.security === "tenant" && op.method !== "GET" ? ["impersonation_read_only"] : [];
  return [...new Set<ErrorCode>([...BY_SECURITY[op.security], ...readOnly, ...body, ...query, ...(op.errors ?? []), "internal_error"])];
}

const NoBody = v.object({});
const RealtimeStreamQuery = v.object({ ticket: v.optional(v.string()), lastEventId: v.optional(v.string()) });
const base = "/api/v1";
const appAdmin = `${base}/admin/apps/:appId`;
const tenantAdmin = `${appAdmin}/tenants/:tenantId`;
const collection = `${base}/data/:collection`;
const RATE: ErrorCode[] = ["rate_limited"];
const IDEMPOTENCY = [{ name: "idempotency-key", description: "1-255 visible ASCII characters: a retry with the same key and request within 24 hours gets the first answer (with `idempotent-replayed: true`) and writes nothing; the same key with another request is 409 (docs/data.md)." }];

/**
 * Every route tenantd serves. A test holds this list equal to the router's, so a route
 * added without its entry here (or an entry without its route) fails the suite.
 */
export const OPERATIONS: Operation[] = [
  { method: "GET", path: "/", tag: "meta", summary: "What this server is: name, version, API base, health and docs links (HTML for browsers)", security: "none", responses: { 200: s.ServerInfo } },
  { method: "GET", path: `${base}/health`, tag: "meta", summary: "Liveness: the process answers and the database answers a trivial query", security: "none", responses: { 200: s.Health }, errors: ["unavailable"] },
  { method: "GET", path: `${base}/health/ready`, tag: "meta", summary: "Readiness: 503 while starting or draining", security: "none", responses: { 200: s.Ready }, errors: ["unavailable"] },
  { method: "GET", path: `${base}/openapi.json`, tag: "meta", summary: "This OpenAPI 3.1 document", security: "none", responses: { 200: v.looseObject({ openapi: v.string() }) } },

  // Tenant auth.
  { method: "POST", path: `${base}/auth/signup`, tag: "auth", summary: "Create an account and sign in", security: "appKey", body: SignupBody, responses: { 201: s.AuthReply }, errors: ["email_exists", "signup_disabled", "invite_required", "invalid_token", ...RATE] },
  { method: "POST", path: `${base}/auth/login`, tag: "auth", summary: "Sign in with email and password", security: "appKey", body: auth.LoginBody, responses: { 200: SignInReply }, errors: ["invalid_credentials", "forbidden", ...RATE],
    description: "A tenant with two-factor authentication (or any tenant, with `settings.auth.requireMfa`) gets `{ mfaRequired: true, mfaTicket, methods, … }` in place of tokens: answer it with `POST /auth/mfa/verify`. `403 forbidden` when the app's developer turned this account's sign-in off (after the password checked out)." },
  { method: "POST", path: `${base}/auth/refresh`, tag: "auth", summary: "Rotate the refresh token for a new access token", security: "appKey", body: auth.RefreshBody, responses: { 200: s.TokenPair }, errors: ["invalid_credentials", "session_ended", ...RATE],
    description: "The refresh token is single-use: a token already rotated (outside a short grace window for concurrent refreshes) ends the whole session (`session_ended`)." },
  { method: "POST", path: `${base}/auth/logout`, tag: "auth", summary: "End this session", security: "tenant", body: auth.LogoutBody, responses: { 204: "empty" } },
  { method: "GET", path: `${base}/auth/me`, tag: "auth", summary: "The signed-in tenant", security: "tenant", responses: { 200: s.TenantReply } },
  { method: "POST", path: `${base}/auth/verify-email`, tag: "auth", summary: "Confirm an email address with the emailed token", security: "appKey", body: auth.TokenBody, responses: { 200: s.Ok }, errors: ["invalid_token", "gone", "already_verified", ...RATE] },
  { method: "POST", path: `${base}/auth/resend-verification`, tag: "auth", summary: "Send the verification email again", security: "tenant", body: auth.LocaleBody, responses: { 200: s.Ok }, errors: ["already_verified", ...RATE] },
  { method: "POST", path: `${base}/auth/request-password-reset`, tag: "auth", summary: "Email a reset link, or hand the token to the app's server", security: "appKey", body: auth.ResetRequestBody,
    headers: [{ name: "x-service-secret", description: "The app's secret key: required when the reply carries the reset token (sendEmail false). Send it from your server only." }],
    responses: { 200: s.ResetTokenReply, 204: "empty" }, errors: ["forbidden", ...RATE] },
  { method: "POST", path: `${base}/auth/reset-password`, tag: "auth", summary: "Set a new password with a reset token", security: "appKey", body: auth.ResetBody, responses: { 200: s.Ok }, errors: ["invalid_token", "gone", ...RATE] },
  { method: "POST", path: `${base}/auth/introspect`, tag: "auth", summary: "Whether an access token is live, and whose", security: "appKey", body: auth.IntrospectBody, responses: { 200: s.Introspection },
    description: "Send the token to check as `authorization: Bearer …`. A missing, invalid, expired or ended token is 200 `{ active: false }`." },
  { method: "GET", path: DEFAULT_LINK_PATHS.verify, tag: "pages", summary: "The page an email's verification link opens", security: "none", query: v.object({ app: v.string(), token: v.string() }), responses: { 200: "html" } },
  { method: "POST", path: DEFAULT_LINK_PATHS.verify, tag: "pages", summary: "The verification page's form post", security: "none", body: "form", responses: { 200: "html" }, errors: ["invalid_request", ...RATE] },
  { method: "GET", path: DEFAULT_LINK_PATHS.reset, tag: "pages", summary: "The page an email's reset link opens", security: "none", query: v.object({ app: v.string(), token: v.string() }), responses: { 200: "html" } },
  { method: "POST", path: DEFAULT_LINK_PATHS.reset, tag: "pages", summary: "The reset page's form post", security: "none", body: "form", responses: { 200: "html" }, errors: ["invalid_request", ...RATE] },

  // Social login.
  { method: "GET", path: `${base}/auth/oauth/:provider`, tag: "oauth", summary: "Start social login (a browser navigation)", security: "none", query: oauth.StartQuery, responses: { 302: "redirect" },
    errors: ["invalid_redirect", "not_found", "forbidden", ...RATE],
    description: "Redirects to the provider. tenantd comes back to `redirect` with `#service_oauth=success&service_access_token=…&service_refresh_token=…` or `#service_oauth=error&error=<code>`, plus `&service_state=<state>` when the start had a `state`: store the tokens only when it is the state this browser tab started with." },
  { method: "GET", path: `${base}/auth/oauth/:provider/callback`, tag: "oauth", summary: "The provider's return (redirects to the app's redirect with the fragment)", security: "none", query: oauth.CallbackParams, responses: { 302: "redirect" }, errors: ["invalid_state", "state_expired", "not_found"] },
  { method: "POST", path: `${base}/auth/oauth/:provider/callback`, tag: "oauth", summary: "Apple's form-post return", security: "none", body: "form", responses: { 302: "redirect" }, errors: ["invalid_state", "state_expired", "not_found", "method_not_allowed"] },
  { method: "GET", path: `${base}/auth/providers`, tag: "oauth", summary: "Social accounts linked to the tenant", security: "tenant", responses: { 200: s.LinkedProviders } },

  // Data.
  { method: "POST", path: `${base}/batch`, tag: "data", summary: "Up to 100 record writes and usage increments, all or nothing", security: "tenant", body: BatchBody, headers: IDEMPOTENCY, responses: { 200: s.BatchReply },
    errors: ["not_found", "conflict", "limit_reached"],
    description: "`operations`: `{ op: \"create\", collection, data }`, `{ op: \"update\", collection, id, data }` (merge patch), `{ op: \"upsert\", collection, data }`, `{ op: \"delete\", collection, id }`, `{ op: \"increment\", featureKey, by?, period? }`, run in order in one transaction. `results[i]` is what the single call answers: its `status` and body fields. When one fails nothing is written, and the error is that operation's own, its message starting `operations[i]`." },
  { method: "POST", path: collection, tag: "data", summary: "Create a record", security: "tenant", body: data.DataBody, headers: IDEMPOTENCY, responses: { 201: s.RecordReply }, errors: ["conflict", "limit_reached"] },
  { method: "GET", path: collection, tag: "data", summary: "List records (filter, sort, limit, offset or after)", security: "tenant", query: data.ListQuery, responses: { 200: s.RecordList }, errors: ["invalid_filter", "invalid_sort", "invalid_cursor"],
    description: "`filter` and `sort` are JSON in the query string; operators `$eq $ne $gt $gte $lt $lte $in`; `$id`, `$createdAt`, `$updatedAt` name the record's own fields; `$text: { $search, fields? }` searches the words of a collection whose search is on (docs/data.md), and `sort={\"$rank\":-1}` orders its matches best first (bm25 on SQLite, ts_rank_cd on PostgreSQL; ties by the next sort keys, then creation). `next`, present when more records may follow, is the cursor of the next page: send it as `after` with the same filter and sort (a ranked list's cursor is a position, as `offset`)." },
  { method: "POST", path: `${collection}/upsert`, tag: "data", summary: "Create or update by the collection's unique field", security: "tenant", body: data.DataBody, headers: IDEMPOTENCY, responses: { 200: s.UpsertReply, 201: s.UpsertReply }, errors: ["conflict"] },
  { method: "GET", path: `${collection}/:id`, tag: "data", summary: "Read a record", security: "tenant", responses: { 200: s.RecordReply }, errors: ["not_found"] },
  { method: "PUT", path: `${collection}/:id`, tag: "data", summary: "Update a record (JSON Merge Patch of data)", security: "tenant", body: data.DataBody, headers: IDEMPOTENCY, responses: { 200: s.RecordReply }, errors: ["not_found", "conflict"] },
  { method: "DELETE", path: `${collection}/:id`, tag: "data", summary: "Delete a record", security: "tenant", headers: IDEMPOTENCY, responses: { 204: "empty" }, errors: ["not_found", "conflict"] },
  { method: "POST", path: `${collection}/:id/share`, tag: "data", summary: "Create a public read link", security: "tenant", body: data.ShareBody, responses: { 201: s.ShareReply }, errors: ["not_found"] },
  { method: "DELETE", path: `${collection}/:id/share`, tag: "data", summary: "Revoke every share link of a record", security: "tenant", responses: { 200: s.RevokeSharesReply }, errors: ["not_found"] },
  { method: "GET", path: `${base}/public/shared/:token`, tag: "data", summary: "Read a shared record (no auth: the token is the capability)", security: "none", responses: { 200: s.RecordReply }, errors: ["not_found", "gone"] },

  // Files.
  { method: "POST", path: `${base}/files/upload`, tag: "files", summary: "Upload a file (multipart/form-data, field `file`)", security: "tenant", body: "multipart", responses: { 201: s.FileReply }, errors: ["invalid_request", "payload_too_large", "unsupported_media_type", "limit_reached"] },
  { method: "GET", path: `${base}/files/:id`, tag: "files", summary: "A file's metadata", security: "tenant", responses: { 200: s.FileReply }, errors: ["not_found"] },
  { method: "DELETE", path: `${base}/files/:id`, tag: "files", summary: "Delete a file", security: "tenant", responses: { 204: "empty" }, errors: ["not_found"] },
  { method: "GET", path: `${base}/public/files/:id/:name`, tag: "files", summary: "A file's bytes (public URL; single byte ranges)", security: "none", responses: { 200: "binary", 206: "binary" }, errors: ["not_found", "range_not_satisfiable"] },

  // Billing and usage.
  { method: "GET", path: `${base}/billing/plans`, tag: "billing", summary: "The app's plans", security: "appKey", responses: { 200: s.PlansReply } },
  { method: "POST", path: `${base}/billing/checkout`, tag: "billing", summary: "Start a checkout for a plan", security: "tenant", body: CheckoutBody, responses: { 200: s.UrlReply }, errors: ["not_found", "conflict", "provider_error", "unavailable"] },
  { method: "POST", path: `${base}/billing/portal`, tag: "billing", summary: "Open the billing portal", security: "tenant", body: PortalBody, responses: { 200: s.UrlReply }, errors: ["not_found", "conflict", "provider_error", "unavailable"] },
  { method: "GET", path: `${base}/billing/subscription`, tag: "billing", summary: "The tenant's effective subscription", security: "tenant", responses: { 200: s.SubscriptionReply } },
  { method: "GET", path: `${base}/billing/entitlements`, tag: "billing", summary: "The tenant's effective entitlements", security: "tenant", responses: { 200: s.EntitlementsReply } },
  { method: "GET", path: `${base}/billing/usage/:featureKey`, tag: "billing", summary: "Usage of a feature this period", security: "tenant", query: UsageQuery, responses: { 200: s.Usage } },
  { method: "POST", path: `${base}/billing/usage/:featureKey/increment`, tag: "billing", summary: "Count usage (atomic; refused past the limit)", security: "tenant", body: IncrementBody, headers: IDEMPOTENCY, responses: { 200: s.Usage }, errors: ["limit_reached", "conflict"] },
  { method: "POST", path: `${base}/billing/stripe/webhook/:appId`, tag: "billing", summary: "Stripe's webhook endpoint (verified with stripe-signature)", security: "none", body: "stripe", responses: { 200: s.StripeReceived }, errors: ["invalid_signature", "not_found", "conflict"] },
  { method: "GET", path: `${DEV_PAGE_PATH}/checkout/:token`, tag: "pages", summary: "Development billing: checkout page (development mode only)", security: "none", responses: { 200: "html" }, errors: ["not_found", "gone"] },
  { method: "POST", path: `${DEV_PAGE_PATH}/checkout/:token`, tag: "pages", summary: "Development billing: confirm or cancel the checkout", security: "none", body: "form", responses: { 303: "redirect" }, errors: ["not_found", "gone"] },
  { method: "GET", path: `${DEV_PAGE_PATH}/portal/:token`, tag: "pages", summary: "Development billing: portal page (development mode only)", security: "none", responses: { 200: "html" }, errors: ["not_found", "gone"] },
  { method: "POST", path: `${DEV_PAGE_PATH}/portal/:token`, tag: "pages", summary: "Development billing: cancel or resume", security: "none", body: "form", responses: { 303: "redirect" }, errors: ["not_found", "gone"] },

  // Account, invites, family.
  { method: "POST", path: `${base}/tenants/me/delete`, tag: "account", summary: "Delete the tenant's account and everything it owns", security: "tenant", responses: { 200: s.AccountDeleted }, errors: ["provider_error"] },
  { method: "POST", path: `${base}/tenants/me/invite-tokens`, tag: "invites", summary: "Create an invite token (plaintext returned once)", security: "tenant", body: CreateInviteBody, responses: { 201: s.InviteTokenCreated }, errors: ["limit_reached"] },
  { method: "GET", path: `${base}/tenants/me/invite-tokens`, tag: "invites", summary: "The tenant's invite tokens and quota", security: "tenant", responses: { 200: s.InviteTokenList } },
  { method: "DELETE", path: `${base}/tenants/me/invite-tokens/:id`, tag: "invites", summary: "Delete an unused invite token", security: "tenant", responses: { 200: s.InviteQuotaReply }, errors: ["not_found", "conflict"] },
  { method: "POST", path: `${base}/auth/family-invite/consume`, tag: "family", summary: "Join a family with a new account", security: "appKey", body: ConsumeBody, responses: { 200: s.FamilyConsumed, 201: s.FamilyConsumed }, errors: ["invalid_token", "gone", "seats_full", "signup_disabled", ...RATE] },
  { method: "POST", path: `${base}/tenants/me/replace-with-family`, tag: "family", summary: "Join a family as an existing tenant", security: "tenant", body: ReplaceBody, responses: { 200: s.FamilyReplaced }, errors: ["invalid_token", "gone", "seats_full", "conflict"] },
  { method: "POST", path: `${base}/tenants/me/family-invites`, tag: "family", summary: "Invite a family member (plaintext returned once)", security: "tenant", body: CreateInviteBody, responses: { 201: s.FamilyInviteCreated }, errors: ["forbidden", "seats_full"] },
  { method: "GET", path: `${base}/tenants/me/family-invites`, tag: "family", summary: "The owner's family invites and seats", security: "tenant", responses: { 200: s.FamilyInviteList }, errors: ["forbidden"] },
  { method: "DELETE", path: `${base}/tenants/me/family-invites/:id`, tag: "family", summary: "Revoke a family invite", security: "tenant", responses: { 200: s.FamilyInviteRevoked }, errors: ["not_found", "conflict"] },
  { method: "GET", path: `${base}/tenants/me/family/members`, tag: "family", summary: "The owner's family members", security: "tenant", responses: { 200: s.FamilyMembers }, errors: ["forbidden"] },
  { method: "POST", path: `${base}/tenants/me/family/remove-member`, tag: "family", summary: "Remove a member", security: "tenant", body: family.RemoveMemberBody, responses: { 200: s.FamilyMemberRemoved }, errors: ["not_found"] },
  { method: "POST", path: `${base}/tenants/me/family/leave`, tag: "family", summary: "Leave the family", security: "tenant", body: family.NoBody, responses: { 200: s.Ok }, errors: ["conflict", "not_found"] },

  // Developer session.
  { method: "POST", path: `${base}/developer/login`, tag: "developer", summary: "Sign in as a developer", security: "none", body: admin.LoginBody, responses: { 200: s.DeveloperLogin }, errors: ["invalid_credentials", ...RATE] },
  { method: "POST", path: `${base}/developer/logout`, tag: "developer", summary: "End the developer session", security: "developer", responses: { 204: "empty" } },
  { method: "GET", path: `${base}/developer/me`, tag: "developer", summary: "The signed-in developer", security: "developer", responses: { 200: s.DeveloperReply } },
  { method: "GET", path: `${base}/developer/usage`, tag: "developer", summary: "Usage over the developer's apps this month", security: "developer", responses: { 200: s.DeveloperUsage } },

  // Admin API.
  { method: "GET", path: `${base}/admin/apps`, tag: "admin", summary: "The developer's apps", security: "developer", responses: { 200: s.AppList } },
  { method: "POST", path: `${base}/admin/apps`, tag: "admin", summary: "Create an app", security: "developer", body: admin.CreateAppBody, responses: { 201: s.AppReply } },
  { method: "GET", path: appAdmin, tag: "admin", summary: "An app", security: "developer", responses: { 200: s.AppReply } },
  { method: "PATCH", path: appAdmin, tag: "admin", summary: "Rename an app or merge-patch its settings", security: "developer", body: admin.UpdateAppBody, responses: { 200: s.AppReply }, errors: ["conflict"] },
  { method: "DELETE", path: appAdmin, tag: "admin", summary: "Delete an app and everything in it", security: "developer", responses: { 204: "empty" } },
  { method: "POST", path: `${appAdmin}/secret-key`, tag: "admin", summary: "Issue the app's secret key (shown once; replaces the old one)", security: "developer", responses: { 200: s.SecretKeyReply } },
  { method: "POST", path: `${appAdmin}/rotate-key`, tag: "admin", summary: "Replace the publishable key", security: "developer", responses: { 200: s.AppReply } },
  { method: "GET", path: `${appAdmin}/tenants`, tag: "admin", summary: "Search tenants (email substring, verified, plan, creation dates; sorted, paged)", security: "developer", query: TenantSearchQuery, responses: { 200: s.TenantList },
    description: "`email` matches a substring, case-insensitively; `plan` keeps tenants with a current subscription, gift or trial on that plan id; `createdFrom` is inclusive and `createdTo` exclusive (a date or ISO 8601 time)." },
  { method: "GET", path: tenantAdmin, tag: "admin", summary: "A tenant (by id or email)", security: "developer", responses: { 200: s.TenantReply } },
  { method: "DELETE", path: tenantAdmin, tag: "admin", summary: "Delete a tenant (admin_delete)", security: "developer", responses: { 204: "empty" }, errors: ["provider_error"] },
  { method: "GET", path: `${tenantAdmin}/overview`, tag: "admin", summary: "A tenant's whole page: profile, sessions, billing, invites, family, record counts, files", security: "developer", responses: { 200: s.TenantOverview } },
  { method: "POST", path: `${tenantAdmin}/sessions/end`, tag: "admin", summary: "Sign a tenant out everywhere (ends every live session)", security: "developer", responses: { 200: s.SessionsEnded } },
  { method: "GET", path: `${tenantAdmin}/records/:collection`, tag: "admin", summary: "A tenant's records in one collection (as the tenant's own list)", security: "developer", query: RecordsQuery, responses: { 200: s.RecordList }, errors: ["invalid_filter", "invalid_sort", "invalid_cursor"],
    description: "`filter` and `sort` are JSON, as in `GET /api/v1/data/{collection}` (docs/data.md)." },
  { method: "GET", path: `${tenantAdmin}/files`, tag: "admin", summary: "A tenant's files, newest first", security: "developer", query: FilesQuery, responses: { 200: s.TenantFiles } },
  { method: "GET", path: `${tenantAdmin}/files/:fileId/preview`, tag: "admin", summary: "An image file's bytes for the dashboard's preview (PNG, JPEG, GIF, WebP, AVIF only)", security: "developer", responses: { 200: "binary" }, errors: ["unsupported_media_type"] },
  { method: "DELETE", path: `${tenantAdmin}/files/:fileId`, tag: "admin", summary: "Delete a tenant's file", security: "developer", responses: { 204: "empty" } },
  { method: "POST", path: `${tenantAdmin}/resend-verification`, tag: "admin", summary: "Resend a tenant's verification email", security: "developer", responses: { 200: s.ResendVerificationAdminReply }, errors: ["already_verified", "conflict"],
    description: "`409 conflict` when nothing would deliver the email: the app sends its own email (`sendEmail: false`) and has no webhook URL." },
  { method: "GET", path: `${appAdmin}/plans`, tag: "admin", summary: "The app's plans, archived ones on request", security: "developer", query: PlanListQuery, responses: { 200: s.AdminPlanList } },
  { method: "POST", path: `${appAdmin}/plans`, tag: "admin", summary: "Create a plan", security: "developer", body: CreatePlanSchema, responses: { 201: s.AdminPlanReply }, errors: ["conflict"] },
  { method: "PATCH", path: `${appAdmin}/plans/:planId`, tag: "admin", summary: "Update a plan", security: "developer", body: UpdatePlanSchema, responses: { 200: s.AdminPlanReply }, errors: ["conflict"] },
  { method: "POST", path: `${appAdmin}/plans/:planId/archive`, tag: "admin", summary: "Archive a plan", security: "developer", responses: { 200: s.AdminPlanReply } },
  { method: "POST", path: `${appAdmin}/plans/:planId/unarchive`, tag: "admin", summary: "Unarchive a plan", security: "developer", responses: { 200: s.AdminPlanReply } },
  { method: "POST", path: `${appAdmin}/plans/:planId/sync-stripe`, tag: "admin", summary: "Create or update the plan's Stripe product and price", security: "developer", responses: { 200: s.AdminPlanReply }, errors: ["conflict", "provider_error"] },
  { method: "GET", path: `${tenantAdmin}/billing`, tag: "admin", summary: "A tenant's billing: every source, entitlements, usage", security: "developer", responses: { 200: s.TenantBilling } },
  { method: "POST", path: `${tenantAdmin}/billing/gift`, tag: "admin", summary: "Gift a plan", security: "developer", body: GiftBody, responses: { 200: s.TenantBilling } },
  { method: "DELETE", path: `${tenantAdmin}/billing/gift`, tag: "admin", summary: "Take a gift back", security: "developer", responses: { 204: "empty" } },
  { method: "POST", path: `${tenantAdmin}/billing/trial`, tag: "admin", summary: "Grant a trial", security: "developer", body: TrialBody, responses: { 200: s.TenantBilling }, errors: ["conflict"] },
  { method: "DELETE", path: `${tenantAdmin}/billing/trial`, tag: "admin", summary: "End a tenant's trial now", security: "developer", responses: { 204: "empty" } },
  { method: "POST", path: `${appAdmin}/tenants`, tag: "admin", summary: "Create a tenant (any sign-up mode; no session is opened)", security: "developer", body: CreateTenantBody, responses: { 201: s.TenantReply }, errors: ["email_exists"],
    description: "Without `password` the tenant sets one through password reset (or signs in with a provider). `verified: true` marks the address verified and sends no verification email." },
  { method: "POST", path: `${tenantAdmin}/sign-in/disable`, tag: "admin", summary: "Turn a tenant's sign-in off: every session ends, sign-in is refused (403 forbidden)", security: "developer", responses: { 200: s.SignInState } },
  { method: "POST", path: `${tenantAdmin}/sign-in/enable`, tag: "admin", summary: "Turn a tenant's sign-in back on", security: "developer", responses: { 200: s.SignInState } },
  { method: "POST", path: `${tenantAdmin}/verify`, tag: "admin", summary: "Mark a tenant's email verified (no email is sent)", security: "developer", responses: { 200: s.TenantReply }, errors: ["already_verified"] },
  { method: "POST", path: `${tenantAdmin}/records/:collection`, tag: "admin", summary: "Create a record for a tenant", security: "developer", body: DataBody, responses: { 201: s.RecordReply }, errors: ["conflict", "limit_reached", "payload_too_large"] },
  { method: "PUT", path: `${tenantAdmin}/records/:collection/:recordId`, tag: "admin", summary: "Merge-patch a tenant's record (as PUT /api/v1/data/{collection}/{id})", security: "developer", body: DataBody, responses: { 200: s.RecordReply }, errors: ["conflict", "payload_too_large"] },
  { method: "DELETE", path: `${tenantAdmin}/records/:collection/:recordId`, tag: "admin", summary: "Delete a tenant's record", security: "developer", responses: { 204: "empty" } },
  { method: "POST", path: `${tenantAdmin}/records/:collection/bulk-delete`, tag: "admin", summary: "Delete every record a filter matches (at most 1000)", security: "developer", body: BulkDeleteBody, responses: { 200: s.RecordsDeleted }, errors: ["conflict", "invalid_filter"],
    description: "`confirm` is the number of records the filter matches: when the selection changed since the developer looked, `409 conflict` and nothing is deleted." },
  { method: "POST", path: `${appAdmin}/webhook-deliveries/:deliveryId/redeliver`, tag: "webhooks", summary: "Send a delivery's event again (a new event with the same content)", security: "developer", responses: { 202: s.WebhookRedelivered }, errors: ["gone"] },
  { method: "GET", path: `${base}/admin/backups`, tag: "admin", summary: "Backups made from the dashboard, newest first, and whether this developer may make them", security: "developer", responses: { 200: s.BackupList } },
  { method: "POST", path: `${base}/admin/backups`, tag: "admin", summary: "Make a backup on the server (operator developers; the password again; never the server key)", security: "developer", body: BackupBody, responses: { 201: s.BackupMade }, errors: ["forbidden", "invalid_credentials", "conflict"],
    description: "Only a developer named with `tenantd developer operator <email>`; `409 conflict` on PostgreSQL or while another backup is written. Recorded as `backup.created` in every app's audit trail." },
  { method: "POST", path: `${base}/admin/backups/:name/download-link`, tag: "admin", summary: "A one-use, one-minute link to download a backup (the password again)", security: "developer", body: BackupBody, responses: { 200: s.BackupLink }, errors: ["forbidden", "invalid_credentials", "conflict"] },
  { method: "GET", path: `${base}/admin/backups/download/:token`, tag: "admin", summary: "Download a backup through its link (recorded as backup.downloaded in every app's trail)", security: "developer", responses: { 200: "binary" }, errors: ["forbidden", "conflict"] },
  { method: "POST", path: `${tenantAdmin}/impersonate`, tag: "admin", summary: "Open a read-only 15-minute session as the tenant (audited as tenant.impersonated)", security: "developer", responses: { 201: s.Impersonation },
    description: "Answers one access token and no refresh token. Used as the tenant's bearer, it reads what the tenant sees; any write, and any step-up action (export, billing portal, deletion), answers `403 impersonation_read_only`." },
  { method: "DELETE", path: `${tenantAdmin}/impersonate/:sessionId`, tag: "admin", summary: "End an impersonation session before its 15 minutes", security: "developer", responses: { 204: "empty" } },
  { method: "GET", path: `${appAdmin}/access-log`, tag: "admin", summary: "The app's recent requests on this node (newest first, the last 500 kept in memory)", security: "developer", query: AccessLogQuery, responses: { 200: s.AccessLog } },
  { method: "GET", path: `${appAdmin}/email/previews`, tag: "admin", summary: "The app's verification and reset emails in en, es and nl, with its name and links", security: "developer", responses: { 200: s.EmailPreviews } },
  { method: "POST", path: `${appAdmin}/email/test`, tag: "admin", summary: "Send a test email through the configured transport, now", security: "developer", body: EmailTestBody, responses: { 200: s.EmailTestSent }, errors: ["provider_error"] },
  { method: "PUT", path: `${appAdmin}/event-webhook-config`, tag: "webhooks", summary: "Set the webhook URL (returns the signing secret once, when new)", security: "developer", body: WebhookUrlBody, responses: { 200: s.WebhookConfig } },
  { method: "GET", path: `${appAdmin}/event-webhook-config`, tag: "webhooks", summary: "The webhook configuration (never the secret)", security: "developer", responses: { 200: s.WebhookConfig } },
  { method: "DELETE", path: `${appAdmin}/event-webhook-config`, tag: "webhooks", summary: "Remove the webhook", security: "developer", responses: { 204: "empty" } },
  { method: "POST", path: `${appAdmin}/event-webhook-config/rotate-secret`, tag: "webhooks", summary: "Replace the signing secret (the old one stops at once)", security: "developer", responses: { 200: s.WebhookConfig }, errors: ["conflict"] },
  { method: "POST", path: `${appAdmin}/event-webhook-config/test`, tag: "webhooks", summary: `Queue a \`${TEST_EVENT}\` event to the webhook URL`, security: "developer", responses: { 202: s.WebhookTestQueued }, errors: ["not_found"],
    description: "The delivery shows in the log like any other; receivers ignore the event name. `404 not_found` when no webhook URL is set." },
  { method: "GET", path: `${appAdmin}/webhook-deliveries`, tag: "webhooks", summary: "The delivery log, newest first (optionally of one status)", security: "developer", query: DeliveryListQuery, responses: { 200: s.WebhookDeliveries } },
  { method: "GET", path: `${appAdmin}/webhook-deliveries/:deliveryId`, tag: "webhooks", summary: "One delivery with the exact body it sent", security: "developer", responses: { 200: s.WebhookDelivery },
    description: "`body` is the raw JSON text that was signed and sent (for `invalid_config`, the text that would have been), so a signature can be re-verified against it; `null` with `bodyNote` saying why when it is not kept (bodies are kept 30 days, rows 90)." },
  { method: "GET", path: `${appAdmin}/indexes`, tag: "admin", summary: "The app's record indexes: declared fields and the ones tenantd built automatically", security: "developer", query: IndexesQuery, responses: { 200: s.RecordIndexes } },
  { method: "GET", path: `${appAdmin}/outbox`, tag: "admin", summary: "The development outbox: emails the app sent, newest first", security: "developer", query: OutboxQuery, responses: { 200: s.OutboxMessages },
    description: "Only while email goes to the outbox (development mode); a server that sends over SMTP answers `404 not_found`." },
  ...MFA_OPERATIONS,
  ...SIGN_IN_OPERATIONS,
  ...ORG_OPERATIONS,
  ...ORG_BILLING_OPERATIONS,

  // Audit trail (docs/audit.md).
  { method: "GET", path: `${appAdmin}/audit`, tag: "audit", summary: "The app's audit trail, newest first, with filters and a cursor", security: "developer", query: AuditQuery, responses: { 200: s.AuditPage },
    description: "`action` is one action or a prefix ending in `*` (`tenant.*`); `cursor` is the previous page's `nextCursor`. Each entry's `hash` seals it and the entry before it (`tenantd audit verify`)." },
  { method: "GET", path: `${base}/account/export`, tag: "account", summary: "Download everything the tenant owns as a ZIP (account, billing, records as JSONL, files)", security: "tenant", responses: { 200: "zip" }, errors: ["conflict", "reauthentication_required", "impersonation_read_only"],
    description: `Streamed as it is read: nothing is kept on the server, and memory stays flat however large the export. One export per account at a time (\`409 conflict\` while one is being read). docs/export.md lists the archive's files. ${STEP_UP_NOTE}` },
  { method: "POST", path: `${base}/account/export/email`, tag: "account", summary: "Mail the tenant a one-use, 24-hour link to its export", security: "tenant", responses: { 202: s.ExportLinkSent },
    errors: ["conflict", "email_not_verified", "reauthentication_required"],
    description: "The link opens a page whose button downloads the same ZIP as `GET /account/export`. Refused (`409`) when the app sends its own email; `403 email_not_verified` until the address is verified." },
  { method: "GET", path: DEFAULT_LINK_PATHS.export, tag: "pages", summary: "The page an export email's link opens", security: "none", query: v.object({ app: v.string(), token: v.string() }), responses: { 200: "html" } },
  { method: "POST", path: DEFAULT_LINK_PATHS.export, tag: "pages", summary: "The export page's form post: the ZIP (or a page saying why not)", security: "none", body: "form", responses: { 200: "zip" }, errors: ["invalid_request"] },
  { method: "GET", path: `${base}/admin/cron`, tag: "hooks", summary: "Scheduled jobs (the hooks module's cron) with their last 20 runs and failures", security: "developer", responses: { 200: s.CronRuns },
    description: "Each run names the node that claimed it: one node runs each scheduled time. docs/hooks.md." },
  // Realtime (docs/realtime.md).
  { method: "POST", path: `${base}/realtime/ticket`, tag: "realtime", summary: "A one-use ticket (30 s) that opens one stream from the query string, for EventSource", security: "tenant", responses: { 201: s.RealtimeTicket } },
  { method: "GET", path: `${base}/realtime`, tag: "realtime", summary: "The client's one stream of live changes (server-sent events), with the bearer headers or ?ticket=", security: "tenant", query: RealtimeStreamQuery, responses: { 200: "sse" }, errors: ["rate_limited"],
    headers: [{ name: "last-event-id", description: "The last id the client saw: the stream replays what it missed once its subscriptions arrive, or sends `reset` when that is past the window." }],
    description: "Events: `ready` (the stream id), `created`, `updated`, `deleted`, `left` (records of the stream's subscriptions), `tenant` (subscription, entitlements, family, invites), `reset`, `ended` (the session ended), `dropped` (the client read too slowly), `closing`. Every event and keep-alive carries an id to resume from. `?ticket=` stands in for the headers (EventSource cannot send them). docs/realtime.md." },
  { method: "POST", path: `${base}/realtime/subscriptions`, tag: "realtime", summary: "Adds subscriptions (a collection and filter, or one record) to a stream, on any node", security: "tenant", body: SubscribeBody, responses: { 201: s.RealtimeSubscribed }, errors: ["invalid_filter", "not_found", "conflict"],
    description: "One subscription (`collection` with `filter` or `record`) or several (`subscriptions`). Filters are the list filter language without `$text`. The first subscriptions of a resumed stream start its replay." },
  { method: "DELETE", path: `${base}/realtime/subscriptions`, tag: "realtime", summary: "Removes subscriptions from a stream", security: "tenant", query: UnsubscribeQuery, responses: { 200: s.RealtimeRemoved }, errors: ["not_found"] },
  { method: "GET", path: `${tenantAdmin}/records/:collection/live`, tag: "admin", summary: "A developer's live view of one tenant's collection (server-sent events), as the dashboard's records browser uses it", security: "developer", query: AdminLiveQuery, responses: { 200: "sse" }, errors: ["not_found", "invalid_filter", "invalid_request", "rate_limited"],
    headers: [{ name: "last-event-id", description: "The last id the client saw: the stream replays what it missed, or sends `reset` when that is past the window." }],
    description: "One subscription, fixed when the stream opens: the collection, narrowed by `filter` when given. The same events as GET /api/v1/realtime (`ready`, `created`, `updated`, `deleted`, `left`, `tenant`, `reset`, `dropped`, `closing`), every record event naming the subscription `live`; `ended` when the developer session ends or the app is no longer yours (reason `session_ended`) or the tenant is deleted (reason `tenant_deleted`). `429 rate_limited` past `realtime.maxConnectionsPerTenant` live views of yours, or `realtime.maxConnectionsPerIp` streams of your address, on the node. docs/dashboard.md." },
  { method: "GET", path: `${base}/account/activity`, tag: "audit", summary: "The tenant's own security events: sign-ins, sign-outs, password and account changes", security: "tenant", query: ActivityQuery, responses: { 200: s.ActivityPage } },
];

// Organization records: the data routes again under /api/v1/orgs/{orgId} (docs/organizations.md).
OPERATIONS.push(...orgRecordOperations(OPERATIONS));

/** The event bodies tenantd posts to the app's webhook URL, by event name. */
export const WEBHOOK_EVENTS: Record<string, { summary: string; payload: Schema }> = {
  "tenant.deleted": {
    summary: "A tenant was deleted (by itself or by the developer); `email` was captured before deletion.",
    payload: v.strictObject({ reason: v.picklist(["self_delete", "admin_delete", "anonymous_idle"]), locale: v.nullable(v.string()) }),
  },
  "tenant.email.resend_verification": {
    summary: "A verification email was asked for again; an app that sends its own email uses the token or URL.",
    payload: v.strictObject({ verifyToken: v.string(), verifyUrl: v.string(), expiresAt: v.pipe(v.string(), v.isoTimestamp()) }),
  },
  "tenant.security": {
    summary: "The tenant's sign-in changed (the tenant is also told by email): `type` says how.",
    payload: v.looseObject({ type: v.picklist(["passkey.added", "passkey.removed", "mfa.enabled", "mfa.disabled", "mfa.recovery_code_used", "sign_in_method.added"]) }),
  },
  "audit.entry": {
    summary: "An entry was added to the app's audit trail (only when the app sets `audit.webhook: true`). `email` is null.",
    payload: v.strictObject({ entry: s.AuditEntry }),
  },
  [TEST_EVENT]: {
    summary: "The developer sent a test delivery (dashboard or `POST …/event-webhook-config/test`); receivers ignore it, as any unknown event. `tenantId` and `email` are null.",
    payload: v.strictObject({ test: v.literal(true), message: v.string() }),
  },
  ...ORG_WEBHOOK_EVENTS,
};
