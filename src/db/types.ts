/**
 * Plain data both engines read and write: the rows and outcomes the repository interfaces
 * (repositories.ts) speak in. No engine code here.
 */
import type { AppSettings } from "../apps/settings.ts";
import type { Json, KeyTerm } from "../data/query.ts";
import type { SearchLanguage } from "../data/text.ts";

// admin

export type TenantSort = "createdAt" | "-createdAt" | "email" | "-email";

export interface TenantSearch {
  /** substring of the email, lower-case */
  email?: string;
  verified?: boolean;
  /** tenants with a current subscription, gift or trial on this plan */
  planId?: string;
  createdFrom?: number;
  createdTo?: number;
  sort: TenantSort;
  limit: number;
  offset: number;
  now: number;
}

export interface TenantSessionRow {
  id: string;
  createdAt: number;
  expiresAt: number;
  endedAt: number | null;
  endReason: string | null;
}


// apps

export interface AppRow {
  id: string;
  name: string;
  publishableKey: string;
  /** SHA-256 of the server-side secret key, or null when none was issued */
  secretKeyHash: string | null;
  ownerId: string | null;
  settings: AppSettings;
  createdAt: number;
  updatedAt: number;
}


// billing

export type Entitlements = Record<string, boolean | number>;

/** What a billing provider's event writes for a tenant's subscription. */
export interface ProviderSubscriptionWrite {
  appId: string;
  tenantId: string;
  planId: string;
  status: string;
  provider: "stripe" | "dev";
  providerSubscriptionId: string;
  currentPeriodEnd: number | null;
  cancelAtPeriodEnd: boolean;
  now: number;
}

export interface PlanRow {
  id: string;
  appId: string;
  name: string;
  slug: string;
  description: string | null;
  priceCents: number;
  currency: string;
  interval: "month" | "year";
  sortOrder: number;
  entitlements: Entitlements;
  stripeProductId: string | null;
  stripePriceId: string | null;
  archivedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type SubscriptionSource = "billing_provider" | "gift" | "trial";

export interface SubscriptionRow {
  tenantId: string;
  source: SubscriptionSource;
  appId: string;
  planId: string;
  status: string;
  provider: "stripe" | "dev" | null;
  providerSubscriptionId: string | null;
  currentPeriodEnd: number | null;
  cancelAtPeriodEnd: boolean;
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface DevSessionRow {
  kind: "checkout" | "portal";
  appId: string;
  tenantId: string;
  planId: string | null;
  successUrl: string;
  cancelUrl: string;
  expiresAt: number;
  usedAt: number | null;
  /** set when the page is an organization's (started by `tenantId`, a member with billing.manage) */
  orgId: string | null;
  /** the seats an organization's checkout buys */
  seats: number | null;
}

export interface UsageRow {
  featureKey: string;
  period: "monthly" | "daily";
  periodStart: number;
  count: number;
}


// developers

export interface DeveloperRow {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: number;
}


// email-tokens

export type EmailTokenPurpose = "verify" | "reset";

export interface NewEmailToken {
  hash: string;
  appId: string;
  tenantId: string;
  purpose: EmailTokenPurpose;
  createdAt: number;
  expiresAt: number;
}

/** Why a token was refused; the caller turns each into a message. */
export interface NewExportLink {
  hash: string;
  appId: string;
  tenantId: string;
  createdAt: number;
  expiresAt: number;
}

export type ConsumeOutcome = { ok: true; tenantId: string } | { ok: false; reason: "unknown" | "used" | "expired" };


// family

export interface FamilyMemberRow {
  tenantId: string;
  email: string;
  joinedAt: number;
}

export interface Membership {
  ownerTenantId: string;
  ownerEmail: string;
  joinedAt: number;
  /** members of the same owner who joined earlier (0 = first) */
  rank: number;
}

export type JoinOutcome =
  | { kind: "joined"; ownerTenantId: string }
  | { kind: "invalid" | "own_invite" | "full" | "already_member" | "has_members" };

export interface SeatCounts {
  members: number;
  pending: number;
}


// files

export interface FileRow {
  id: string;
  appId: string;
  tenantId: string;
  /** the unstorage key of the blob */
  pathname: string;
  sizeBytes: number;
  mimeType: string;
  originalFilename: string | null;
  /** hex SHA-256 of the bytes; the public ETag */
  sha256: string;
  createdAt: number;
}

/** A file's blob key, enough to remove the blob before its row. */
export interface FileBlobRef {
  id: string;
  pathname: string;
}

export type InsertFileResult = "inserted" | "over_quota" | "tenant_gone";


// invites

/** An invite token or a family invite: both tables share this shape. */
export interface InviteRow {
  id: string;
  appId: string;
  /** who created it (the inviter, or the family owner) */
  tenantId: string;
  tokenHash: string;
  note: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedByTenantId: string | null;
}

export type RemoveOutcome = "removed" | "used" | "not_found";


// oauth

export interface OAuthStateRow {
  stateHash: string;
  appId: string;
  provider: string;
  redirectUrl: string;
  /** sealed */
  inviteToken: string | null;
  /** sealed */
  codeVerifier: string | null;
  browserHash: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export type OAuthConsumeOutcome =
  | { kind: "unknown" }
  | { kind: "mismatch" | "used" | "expired" | "ok"; state: OAuthStateRow };

export interface OAuthLink {
  appId: string;
  provider: string;
  providerAccountId: string;
  email: string | null;
  emailVerified: boolean;
  at: number;
}

export interface LinkedAccount {
  provider: string;
  email: string | null;
  linkedAt: number;
}


// outbox

export interface OutboxMessage {
  id: string;
  appId: string;
  tenantId: string | null;
  kind: string;
  locale: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  link: string | null;
  createdAt: number;
}


// record-auto-indexes

export interface AutoIndexInfo {
  collection: string;
  field: string;
  /** ready: built and used by lists; pending: queued for building; refused: see reason */
  state: "ready" | "pending" | "refused";
  name: string | null;
  reason: string | null;
  /** rows of the collection when built */
  rows: number | null;
  buildMs: number | null;
  createdAt: number | null;
  lastUsedAt: number | null;
}


// records

export interface RecordRow {
  seq: number;
  id: string;
  /** serialized JSON object */
  data: string;
  createdAt: number;
  updatedAt: number;
}

/** Turns the stored data into the next data (merge patch); may throw to abort the write. */
export type DataTransform = (current: Record<string, unknown>) => Record<string, unknown>;

/** A usage counter increment (billing_usage), as the billing repository takes it. */
export interface UsageIncrement {
  appId: string;
  tenantId: string;
  featureKey: string;
  period: string;
  periodStart: number;
  by: number;
  limit: number | null;
}

/** One write of a batch (records.batch), in the terms of the single-write methods (`cap`: the record quota, checked in the insert). */
export type BatchWrite =
  | { kind: "insert"; scope: RecordScope; id: string; data: Record<string, unknown>; unique: readonly string[]; cap: number | null; bytesCap?: number | null }
  | { kind: "update"; scope: RecordScope; id: string; transform: DataTransform; unique: readonly string[]; bytesCap?: number | null }
  | { kind: "upsert"; scope: RecordScope; key: { field: string; value: Json }; newId: string; data: Record<string, unknown>; transform: DataTransform; unique: readonly string[]; cap: number | null; bytesCap?: number | null }
  | { kind: "remove"; scope: RecordScope; id: string }
  | { kind: "usage"; usage: UsageIncrement };

/** What each write did: the row (undefined: not in scope), upsert's row and whether it created, removed or not, the new count (undefined: over the limit). */
export type BatchOutcome = RecordRow | undefined | { row: RecordRow; created: boolean } | boolean | number;

/** An answer kept for a retried write (Idempotency-Key). */
export interface KeptReply {
  requestHash: string;
  status: number;
  body: string | null;
}

/** The idempotency key a batch claims in its transaction; the answer is stored with it. */
export interface IdempotencyClaim {
  appId: string;
  tenantId: string;
  keyHash: string;
  requestHash: string;
  /** a kept row created before this is expired: the key is free again */
  expiredBefore: number;
}

export interface ShareLinkRow {
  id: string;
  createdAt: number;
  expiresAt: number | null;
}

export interface ListPage {
  limit: number;
  offset: number;
  maxBytes: number;
  /** the largest `data` a record may hold: when `limit` of them fit in `maxBytes`, the page is read at once */
  maxRecordBytes: number;
  /** a cursor page: only records past this place in the list's order (offset is then 0) */
  after?: KeyTerm[];
}


// records-sql

/** Who is asking and where: the server adds this predicate to every statement. */
export interface RecordScope {
  appId: string;
  tenantId: string;
  collection: string;
  /** data fields that have an expression index in this app's collection */
  indexed: ReadonlySet<string>;
  /** the collection's full-text search language, when its search is on */
  search?: SearchLanguage;
  /**
   * Set when the realtime feed wants this app's writes (src/realtime/feed.ts): the store then
   * appends each write's change to `realtime_changes` in the write's own transaction.
   */
  feed?: true;
}


// sessions

export interface SessionState {
  id: string;
  tenantId: string;
  appId: string;
  expiresAt: number;
  endedAt: number | null;
}

export type RefreshOutcome =
  | { kind: "rotated"; session: SessionState; parentTenantId: string | null }
  /**
   * The token was rotated moments ago: the successor already issued is handed out again.
   * It is derived from the old token, so only its hash is kept; versions before 0.2 stored
   * it sealed instead (`sealedSuccessor`, null for rotations since).
   */
  | { kind: "repeat"; session: SessionState; parentTenantId: string | null; successorHash: string; sealedSuccessor: string | null }
  | { kind: "unknown" }
  | { kind: "ended"; session: SessionState }
  | { kind: "expired"; session: SessionState }
  | { kind: "reused"; session: SessionState };

export interface RotateInput {
  /** the app whose key presented the token */
  appId: string;
  /** hash of the successor token */
  hash: string;
  now: number;
  expiresAt: number;
  graceMs: number;
}


// stats

export interface AppUsage {
  appId: string;
  tenants: number;
  records: number;
  fileBytes: number;
  webhookDeliveriesThisMonth: number;
}


// tenants

export interface TenantRow {
  id: string;
  appId: string;
  email: string;
  passwordHash: string | null;
  emailVerifiedAt: number | null;
  locale: string;
  parentTenantId: string | null;
  createdAt: number;
}

export interface NewSession {
  id: string;
  refreshHash: string;
  createdAt: number;
  expiresAt: number;
  /** How the tenant signed in ("password", "password+totp", "passkey"…), for step-up. */
  authMethods?: string;
}

/** Synchronous work another repository adds to a tenant-creating transaction; throw to roll it back. */
export type InTransactionStep = (tenantId: string) => void;

/** How a developer narrows the tenant list: email substring, verified or not, created in [from, before). */
export interface TenantListFilter {
  emailContains?: string;
  verified?: boolean;
  createdFrom?: number;
  createdBefore?: number;
}


// webhooks

export interface WebhookConfigRow {
  appId: string;
  url: string;
  secretSealed: string;
  secretCreatedAt: number;
  createdAt: number;
  updatedAt: number;
}

export interface QueuedEvent {
  id: string;
  appId: string;
  event: string;
  tenantId: string | null;
  /** sealed JSON `{ email, payload }` */
  data: string;
  createdAt: number;
}

export type DeliveryStatus = "sending" | "delivered" | "failed" | "invalid_config";

export interface DeliveryRow {
  id: string;
  appId: string;
  event: string;
  tenantId: string | null;
  status: DeliveryStatus;
  url: string | null;
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
  createdAt: number;
  finishedAt: number | null;
  /** The exact JSON text sent (or, for `invalid_config`, that would have been), sealed. */
  bodySealed: string | null;
}

export interface DeliveryOutcome {
  status: Exclude<DeliveryStatus, "sending">;
  url: string | null;
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
  finishedAt: number;
  /** sealed body text; null when the delivery failed before a body was built */
  bodySealed: string | null;
}

export interface RawDelivery {
  id: string;
  app_id: string;
  event: string;
  tenant_id: string | null;
  status: DeliveryStatus;
  url: string | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: number;
  finished_at: number | null;
  body_sealed: string | null;
}


/** A tenant's TOTP enrolment; `confirmedAt` null while it waits for its first code. */
export interface TotpRow {
  tenantId: string;
  appId: string;
  secretSealed: string;
  confirmedAt: number | null;
  lastStep: number | null;
  createdAt: number;
}

export interface PasskeyRow {
  id: string;
  appId: string;
  tenantId: string;
  /** base64url */
  credentialId: string;
  /** base64url COSE public key */
  publicKey: string;
  counter: number;
  /** JSON array of transports, or null */
  transports: string | null;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export type AuthChallengeKind = "mfa_ticket" | "passkey_register" | "passkey_sign_in" | "passkey_reauth";

/** A short-lived single-use value (MFA ticket, WebAuthn challenge), stored by hash. */
export interface AuthChallengeRow {
  hash: string;
  appId: string;
  tenantId: string | null;
  kind: AuthChallengeKind;
  /** JSON of what the kind needs (the first factor's methods, the challenge itself) */
  data: string;
  attempts: number;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export type ChallengeOutcome = { ok: true; row: AuthChallengeRow } | { ok: false; reason: "unknown" | "used" | "expired" };

/** When a session last authenticated and how (COALESCE of the re-authentication and its creation). */
export interface SessionAuth {
  tenantId: string;
  authenticatedAt: number;
  methods: string | null;
}
// signing keys

export interface SigningKeyRow {
  kid: string;
  appId: string;
  /** the raw Ed25519 public key, base64url (a JWK's `x`) */
  publicKey: string;
  /** the PKCS #8 private key, sealed with the context `${appId}:${kid}` */
  privateKeySealed: string;
  createdAt: number;
  retiredAt: number | null;
}

// email sign-in and anonymous tenants

export interface EmailSignInRow {
  id: string;
  appId: string;
  email: string;
  linkHash: string;
  codeHash: string;
  createdAt: number;
  expiresAt: number;
}

export type EmailSignInOutcome = { ok: true; email: string } | { ok: false; reason: "unknown" | "used" | "expired" | "attempts" };

// audit

/** One entry of an app's audit trail, as stored: `hash` seals it and the entry before it. */
export interface AuditEntryRow {
  appId: string;
  /** position in the app's chain, from 1, without gaps */
  seq: number;
  id: string;
  at: number;
  actorType: string;
  actorId: string | null;
  action: string;
  tenantId: string | null;
  target: string | null;
  ip: string | null;
  client: string | null;
  requestId: string | null;
  /** serialized JSON object, or null */
  details: string | null;
  prevHash: string;
  hash: string;
}

export type NewAuditEntry = Omit<AuditEntryRow, "seq" | "prevHash" | "hash">;

/**
 * The app's chain head: the last entry's seq and hash, and where retention cut the chain
 * (the last pruned entry's seq and hash, which the first kept entry names as its previous).
 */
export interface AuditHead {
  seq: number;
  hash: string;
  prunedSeq: number;
  prunedHash: string;
}

/** Newest first, before `beforeSeq` (the cursor); every field narrows. */
export interface AuditFilter {
  tenantId?: string;
  /** exact action, or every action starting with `actionPrefix` */
  action?: string;
  actionPrefix?: string;
  actorType?: string;
  actorId?: string;
  from?: number;
  to?: number;
  beforeSeq?: number;
  limit: number;
}


// cron

export interface CronRunRow {
  name: string;
  /** the scheduled time this run stands for (ms): one run per (name, slot) across every node */
  slot: number;
  node: string;
  startedAt: number;
  finishedAt: number | null;
  status: "running" | "ok" | "failed";
  error: string | null;
}


// realtime

/** A row of the realtime change feed (realtime_changes), as the store reads it. */
export interface RealtimeChangeRow {
  seq: number;
  appId: string;
  tenantId: string;
  /** created, updated, deleted (records), or a tenant event's name */
  kind: string;
  collection: string | null;
  recordId: string | null;
  /** the record after the write (feedRecord), or a tenant event's JSON */
  data: string | null;
  /** the record before an update or delete (feedRecord) */
  before: string | null;
  at: number;
}

export type NewRealtimeChange = Omit<RealtimeChangeRow, "seq">;

/** A one-use stream ticket (POST /api/v1/realtime/ticket), kept by hash. */
export interface RealtimeTicketRow {
  appId: string;
  tenantId: string;
  sessionId: string;
  expiresAt: number;
}
