/**
 * The store's domain operations, one repository per area, as explicit types that every
 * engine implements (SQLite in src/db/sqlite/, PostgreSQL in src/db/postgres/). Areas above
 * db/ see only these, the rows in types.ts and the values in shared.ts. Every method is
 * atomic on its own; the few synchronous members are steps that run inside another
 * repository's transaction (tenant creation). The reads on the hot paths (app, session
 * state, tenant, record by id, record list) answer `Awaitable`: synchronously where the engine can
 * (src/awaitable.ts).
 */
import type { Awaitable } from "../awaitable.ts";
import type { SearchLanguage } from "../data/text.ts";
import type {
  AppRow,
  AppUsage,
  BatchOutcome,
  BatchWrite,
  IdempotencyClaim,
  KeptReply,
  UsageIncrement,
  AuditEntryRow,
  AuditFilter,
  AuditHead,
  AutoIndexInfo,
  ConsumeOutcome,
  CronRunRow,
  DataTransform,
  DeliveryOutcome,
  DeliveryRow,
  DeliveryStatus,
  DevSessionRow,
  DeveloperRow,
  EmailTokenPurpose,
  FamilyMemberRow,
  FileBlobRef,
  FileRow,
  InTransactionStep,
  InsertFileResult,
  InviteRow,
  JoinOutcome,
  LinkedAccount,
  ListPage,
  Membership,
  NewAuditEntry,
  NewEmailToken,
  NewExportLink,
  NewSession,
  OAuthConsumeOutcome,
  OAuthLink,
  OAuthStateRow,
  OutboxMessage,
  PlanRow,
  ProviderSubscriptionWrite,
  QueuedEvent,
  RecordRow,
  RecordScope,
  RefreshOutcome,
  RemoveOutcome,
  RotateInput,
  SeatCounts,
  SessionState,
  ShareLinkRow,
  SigningKeyRow,
  EmailSignInRow,
  EmailSignInOutcome,
  SubscriptionRow,
  SubscriptionSource,
  TenantListFilter,
  TenantRow,
  TenantSearch,
  TenantSessionRow,
  UsageRow,
  WebhookConfigRow,
  TotpRow,
  PasskeyRow,
  AuthChallengeRow,
  AuthChallengeKind,
  ChallengeOutcome,
  SessionAuth,
  NewRealtimeChange,
  RealtimeChangeRow,
  RealtimeTicketRow,
} from "./types.ts";
import type { Condition, Json, SortKey } from "../data/query.ts";
import type { OrgProviderSubscriptionWrite, OrgSubscriptionRow, OrgUsageIncrement } from "./org-billing-types.ts";
import type { MemberChange, RoleCheck, MemberCursor, MemberOrgRow, OrgInviteRow, OrgJoinOutcome, OrgMemberRow, OrgRow, OrgSeatCounts } from "./org-types.ts";

export interface MetaRepository {
  /** A trivial query: throws when the database does not answer (the liveness probe). */
  ping(): Promise<void>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
}

export interface AppsRepository {
  findById(id: string): Awaitable<AppRow | undefined>;
  findByKey(key: string): Awaitable<AppRow | undefined>;
  /** Every app, from the cache (the CORS preflight check reads it on each OPTIONS). */
  cached(): Promise<AppRow[]>;
  list(ownerId?: string): Promise<AppRow[]>;
  count(): Promise<number>;
  insert(app: AppRow): Promise<void>;
  update(app: Pick<AppRow, "id" | "name" | "publishableKey" | "settings" | "updatedAt">): Promise<void>;
  setSecretKeyHash(appId: string, hash: string, at: number): Promise<void>;
  setOwner(appId: string, ownerId: string): Promise<void>;
  adoptUnowned(ownerId: string): Promise<number>;
  remove(id: string): Promise<boolean>;
}

export interface DevelopersRepository {
  insert(d: DeveloperRow): Promise<void>;
  findByEmail(email: string): Promise<DeveloperRow | undefined>;
  findById(id: string): Promise<DeveloperRow | undefined>;
  list(): Promise<DeveloperRow[]>;
  /** Sets a new password and ends every session of the developer. */
  setPassword(id: string, passwordHash: string): Promise<void>;
  createSession(tokenHash: string, developerId: string, now: number, expiresAt: number): Promise<void>;
  findBySession(tokenHash: string, now: number): Promise<DeveloperRow | undefined>;
  endSession(tokenHash: string): Promise<void>;
  /** Whether the operator lets this developer make and download backups from the dashboard. */
  isBackupOperator(id: string): Promise<boolean>;
  setBackupOperator(id: string, on: boolean, now: number): Promise<void>;
}

export interface TenantsRepository {
  /**
   * Creates the tenant and its first session in one transaction. Throws on a duplicate
   * email. `step` runs last in the same transaction (an invite being used up); when it
   * throws, nothing is created.
   */
  createWithSession(tenant: TenantRow, session: NewSession, step?: InTransactionStep): Promise<void>;
  findByEmail(appId: string, email: string): Promise<TenantRow | undefined>;
  /**
   * With `now` (the caller's clock) an engine may answer from memory, as long as its own
   * writes show at once and other processes' within a fraction of a second (SQLite:
   * src/db/sqlite/row-cache.ts); without it, from the store.
   */
  findById(appId: string, id: string, now?: number): Awaitable<TenantRow | undefined>;
  /** Newest first; filtered by a substring of the email, verified or not, created in [from, before). */
  list(appId: string, opts: TenantListFilter & {
      limit: number;
      offset: number;
  }): Promise<{
      tenants: TenantRow[];
      total: number;
  }>;
  markVerified(id: string, at: number): Promise<void>;
  setPasswordHash(id: string, hash: string): Promise<void>;
  setLocale(id: string, locale: string): Promise<void>;
  /** Deletes the tenant; every row it owns goes with it (foreign keys cascade). */
  remove(appId: string, id: string): Promise<boolean>;
}

export interface SessionsRepository {
  create(tenantId: string, appId: string, s: NewSession): Promise<void>;
  /**
   * The state an access token's session is checked against on every request. `now` (the
   * guard's clock) lets an engine serve it from memory and look for other processes'
   * revocations at most every 0.1 s (SQLite); PostgreSQL reads the row each time.
   */
  state(sessionId: string, now?: number): Awaitable<SessionState | undefined>;
  /**
   * Exchanges a refresh token for a new one. Within `graceMs` of a rotation, the same old
   * token gets the same successor again (`repeat`, idempotent); any other use of a rotated
   * token is reuse and the whole session ends.
   */
  rotate(oldHash: string, next: RotateInput): Promise<RefreshOutcome>;
  end(sessionId: string, at: number, reason: string): Promise<boolean>;
  endAllForTenant(tenantId: string, at: number, reason: string): Promise<number>;
  /** Marks the tenant deleting (new files refused) and ends every session, atomically. */
  beginTenantDeletion(appId: string, tenantId: string, now: number): Promise<void>;
  /** Undoes `beginTenantDeletion` (a hook refused the deletion before anything was removed). */
  cancelTenantDeletion(appId: string, tenantId: string): Promise<void>;
  /** Drops sessions that expired or ended before `before`. */
  purge(before: number): Promise<number>;
}

export interface StatsRepository {
  appUsage(appId: string, monthStart: number): Promise<AppUsage>;
}

export interface OAuthRepository {
  createState(state: Omit<OAuthStateRow, "usedAt">): Promise<void>;
  /** Marks the state used when the browser matches; tells why it cannot be used otherwise. */
  consumeState(stateHash: string, browserMatches: (hash: string) => boolean, now: number): Promise<OAuthConsumeOutcome>;
  findTenant(appId: string, provider: string, providerAccountId: string): Promise<TenantRow | undefined>;
  /** Records what the provider said at this sign-in. */
  touch(l: OAuthLink): Promise<void>;
  /**
   * Links the account to an existing tenant with the same, provider-verified email. A tenant
   * whose email was not verified yet becomes verified, loses its password and its sessions.
   */
  linkExisting(l: OAuthLink, tenantId: string): Promise<void>;
  /**
   * The link of a new tenant, as a step of the transaction that creates it
   * (`tenants.createWithSession`): a duplicate link then creates nothing.
   */
  linkStep(l: OAuthLink): InTransactionStep;
  listForTenant(appId: string, tenantId: string): Promise<LinkedAccount[]>;
}

export interface EmailTokensRepository {
  /** Stores a new token (hashed), replacing the tenant's older tokens of the same purpose. */
  issue(token: NewEmailToken): Promise<void>;
  /** Checks a token without using it (before the slow password hash of a reset). */
  check(hash: string, appId: string, purpose: EmailTokenPurpose, now: number): Promise<ConsumeOutcome>;
  /** Uses a verification token and marks the tenant's email verified, atomically. */
  verifyEmail(hash: string, appId: string, now: number): Promise<ConsumeOutcome>;
  /**
   * Uses a reset token: sets the new password hash, ends every session of the tenant,
   * marks the email verified and drops other reset tokens, atomically.
   */
  resetPassword(hash: string, appId: string, passwordHash: string, now: number): Promise<ConsumeOutcome>;
  /** Stores an emailed export download link (hashed; docs/export.md). */
  issueExportLink(link: NewExportLink): Promise<void>;
  /** Checks an export link without using it (the page before the download). */
  checkExportLink(hash: string, appId: string, now: number): Promise<ConsumeOutcome>;
  /** Uses an export link: of two concurrent uses, one wins. */
  useExportLink(hash: string, appId: string, now: number): Promise<ConsumeOutcome>;
}

export interface OutboxRepository {
  insert(m: OutboxMessage): Promise<void>;
  /** Newest first; one app's messages when `appId` is given. */
  list(opts: {
      appId?: string;
      limit: number;
  }): Promise<OutboxMessage[]>;
}

export interface WebhooksRepository {
  findConfig(appId: string): Promise<WebhookConfigRow | undefined>;
  /** Sets the URL; creates the config with `sealedSecret` when there is none. True when created. */
  setUrl(appId: string, url: string, sealedSecret: string, now: number): Promise<boolean>;
  /** Replaces the secret; false when the app has no config. */
  setSecret(appId: string, sealedSecret: string, now: number): Promise<boolean>;
  removeConfig(appId: string): Promise<boolean>;
  enqueue(e: QueuedEvent): Promise<void>;
  /** Takes up to `limit` events off the queue, oldest first, logging each as `sending`. */
  claim(limit: number, now: number): Promise<QueuedEvent[]>;
  finish(id: string, o: DeliveryOutcome): Promise<void>;
  /** Marks deliveries still `sending` since before `claimedBefore` as failed (their process stopped). */
  failStale(claimedBefore: number, now: number, reason: string): Promise<number>;
  /** Newest first. */
  listDeliveries(appId: string, limit: number, offset: number): Promise<{
      deliveries: DeliveryRow[];
      total: number;
  }>;
  queuedCount(appId: string): Promise<number>;
  /** Events waiting to be sent, over every app (the metrics' queue depth). */
  queueDepth(): Promise<number>;
  /** One delivery of the app, with its sealed body (another app's id finds nothing). */
  findDelivery(appId: string, id: string): Promise<DeliveryRow | undefined>;
  /** Forgets bodies of events older than `bodiesBefore` and whole rows older than `rowsBefore`. */
  prune(bodiesBefore: number, rowsBefore: number): Promise<{ bodies: number; rows: number }>;
  /** The deliveries of events about one tenant, oldest first (its data export), without bodies. */
  tenantDeliveries(appId: string, tenantId: string, limit: number, offset: number): Promise<DeliveryRow[]>;
}

export interface FilesRepository {
  /**
   * Inserts the row unless it would take the tenant's stored bytes past `quotaBytes`
   * (null: no quota). A tenant deleted meanwhile is reported, not thrown.
   */
  insert(f: FileRow, quotaBytes: number | null): Promise<InsertFileResult>;
  /** Bytes the tenant stores now. */
  usedBytes(appId: string, tenantId: string): Promise<number>;
  /** Files the tenant stores now. */
  count(appId: string, tenantId: string): Promise<number>;
  /** The tenant's own file; another tenant's or app's is undefined. */
  find(appId: string, tenantId: string, id: string): Promise<FileRow | undefined>;
  /** Any file by id: the public URL carries only the (unguessable) id. */
  findPublic(id: string): Promise<FileRow | undefined>;
  remove(appId: string, tenantId: string, id: string): Promise<boolean>;
  removeById(appId: string, id: string): Promise<void>;
  tenantBlobs(appId: string, tenantId: string): Promise<FileBlobRef[]>;
  /** The app's files after `afterId` in id order, `limit` at a time. */
  appBlobs(appId: string, afterId: string, limit: number): Promise<FileBlobRef[]>;
}

export interface BillingRepository {
  /**
   * Optional: a number that changes whenever plans, subscriptions or family membership may
   * have changed (any process; on SQLite another process's change within 0.1 s of `now`, the
   * caller's clock; on PostgreSQL when its announcement arrives). With it, effective
   * entitlements are kept in memory between changes (src/billing/effective.ts); without it,
   * or while it answers undefined (PostgreSQL not listening for changes), they are read every time.
   */
  entitlementsVersion?(now?: number): number | undefined;
  insertPlan(plan: PlanRow): Promise<void>;
  updatePlan(plan: PlanRow): Promise<boolean>;
  findPlan(appId: string, id: string): Promise<PlanRow | undefined>;
  findPlanBySlug(appId: string, slug: string): Promise<PlanRow | undefined>;
  findPlanByStripePrice(appId: string, priceId: string): Promise<PlanRow | undefined>;
  /** Sorted by sortOrder; archived plans only when asked. */
  listPlans(appId: string, opts: {
      includeArchived: boolean;
  }): Promise<PlanRow[]>;
  subscriptions(appId: string, tenantId: string): Promise<SubscriptionRow[]>;
  findByProviderSubscription(appId: string, providerSubscriptionId: string): Promise<SubscriptionRow | undefined>;
  /** Writes the tenant's provider subscription; false when a live one for another subscription id is kept. */
  upsertProviderSubscription(s: ProviderSubscriptionWrite): Promise<boolean>;
  /** A gift or trial; replaces an earlier one of the same source. */
  upsertGrant(g: {
      appId: string;
      tenantId: string;
      source: "gift" | "trial";
      planId: string;
      expiresAt: number | null;
      now: number;
  }): Promise<void>;
  removeSource(appId: string, tenantId: string, source: SubscriptionSource): Promise<boolean>;
  setDevCancelAtPeriodEnd(appId: string, tenantId: string, cancel: boolean, now: number): Promise<boolean>;
  stripeCustomer(appId: string, tenantId: string): Promise<string | undefined>;
  tenantForStripeCustomer(appId: string, customerId: string): Promise<string | undefined>;
  /** Keeps the first customer recorded for a tenant; returns the one that is stored. */
  saveStripeCustomer(appId: string, tenantId: string, customerId: string, now: number): Promise<string>;
  stripeEventSeen(appId: string, eventId: string): Promise<boolean>;
  recordStripeEvent(appId: string, eventId: string, type: string, now: number): Promise<void>;
  insertDevSession(s: {
      tokenHash: string;
      kind: "checkout" | "portal";
      appId: string;
      tenantId: string;
      planId: string | null;
      successUrl: string;
      cancelUrl: string;
      now: number;
      expiresAt: number;
      orgId?: string | null;
      seats?: number | null;
  }): Promise<void>;
  findDevSession(tokenHash: string): Promise<DevSessionRow | undefined>;
  /** Marks a live, unused session used; false if it was used, expired or unknown. */
  consumeDevSession(tokenHash: string, now: number): Promise<boolean>;
  usage(appId: string, tenantId: string, featureKey: string, period: string, periodStart: number): Promise<number>;
  /** Counters of the current month and day. */
  usageList(appId: string, tenantId: string, monthStart: number, dayStart: number): Promise<UsageRow[]>;
  /** Adds `by` unless the result would pass `limit` (null = none); the new count, or undefined when refused. */
  incrementUsage(u: UsageIncrement): Awaitable<number | undefined>;
}

export interface RecordsRepository {
  get(scope: RecordScope, id: string): Awaitable<RecordRow | undefined>;
  /**
   * One query for the page, one for the total, read from the same snapshot. The page ends
   * early once its records' data passes `maxBytes` (it always holds at least one record).
   */
  list(scope: RecordScope, conditions: Condition[], sort: SortKey[], page: ListPage, now: number): Awaitable<{
      records: RecordRow[];
      total: number;
  }>;
  /**
   * Inserts after checking unique fields in the same write transaction (throws UniqueConflict),
   * unless the tenant already holds `cap` records across its collections, or its record data
   * would pass `bytesCap` bytes (throws QuotaReached; null: no cap). Concurrent writes cannot
   * pass the byte cap together.
   */
  insert(scope: RecordScope, id: string, data: Record<string, unknown>, now: number, unique: readonly string[], cap: number | null, bytesCap?: number | null): Promise<RecordRow>;
  /**
   * Reads, transforms and writes back in one transaction; undefined when the record is not in
   * scope. A write that grows the data past the tenant's `bytesCap` throws QuotaReached.
   */
  update(scope: RecordScope, id: string, transform: DataTransform, now: number, unique: readonly string[], bytesCap?: number | null): Promise<RecordRow | undefined>;
  /**
   * Merge-patches (RFC 7396) the record's data with `patch` (JSON text of an object) inside
   * the store, in one statement, when the result takes at most `maxBytes` bytes. Undefined
   * when it did not write: no such record in scope, or the result too large; update() then
   * says which. Engines without a merge-patch function leave it out (PostgreSQL's jsonb
   * merges one level only). Undefined too when the result would take the tenant's record data
   * past `bytesCap`.
   */
  patch?(scope: RecordScope, id: string, patch: string, now: number, maxBytes: number, bytesCap?: number | null): Promise<RecordRow | undefined>;
  /**
   * Finds the record whose `key.field` equals `key.value` and transforms it, or inserts `data`
   * unless the tenant holds `cap` records; either throws QuotaReached when it would take the
   * tenant's record data past `bytesCap`.
   */
  upsert(scope: RecordScope, key: {
      field: string;
      value: Json;
  }, newId: string, data: Record<string, unknown>, transform: DataTransform, now: number, unique: readonly string[], cap: number | null, bytesCap?: number | null): Promise<{
      row: RecordRow;
      created: boolean;
  }>;
  remove(scope: RecordScope, id: string, now?: number): Promise<boolean>;
  /**
   * Runs `writes` in order in one transaction: all of them commit or none. `check` sees each
   * write's outcome and throws to roll everything back; a write or check that throws is
   * rethrown as BatchFailure naming its index. With `claim`, the idempotency key is taken in
   * the same transaction and `claim.reply(outcomes)` is kept with it; "taken" (nothing
   * written) when the key already holds an answer that has not expired.
   */
  batch(
    writes: BatchWrite[],
    now: number,
    check: (index: number, outcome: BatchOutcome) => void,
    claim?: { key: IdempotencyClaim; reply: (outcomes: BatchOutcome[]) => { status: number; body: string | null } },
  ): Promise<BatchOutcome[] | "taken">;
  /** Makes the app's full-text index hold exactly the records of the `wanted` collections, in their languages. */
  syncSearch(appId: string, wanted: { collection: string; language: SearchLanguage }[]): Promise<void>;
  /** The answer kept for a tenant's idempotency key, unless created before `notBefore`. */
  keptReply(appId: string, tenantId: string, keyHash: string, notBefore: number): Promise<KeptReply | undefined>;
  /** Drops kept answers created before `before`; how many went. */
  purgeKeptReplies(before: number): Promise<number>;
  /**
   * Adds a share link unless the record already has `maxLinks` links that have not expired
   * (expired ones are deleted first): false when the record is not in scope, "full" at the cap.
   */
  createShareLink(scope: RecordScope, recordId: string, link: ShareLinkRow, tokenHash: string, maxLinks: number): Promise<boolean | "full">;
  /** Deletes every share link of the record; undefined when the record is not in scope. */
  revokeShareLinks(scope: RecordScope, recordId: string): Promise<number | undefined>;
  findShared(tokenHash: string): Promise<{
      record: RecordRow;
      expiresAt: number | null;
  } | undefined>;
  /** Makes the app's per-field indexes exactly `fields`: missing ones built, stale ones dropped. */
  syncIndexes(appId: string, fields: {
      collection: string;
      path: string;
  }[]): Promise<void>;
  /** Drops per-field indexes of apps that no longer exist. */
  dropIndexesExcept(appIds: string[]): Promise<void>;
  /** Drops the app's automatic indexes (the app is being deleted). */
  dropAutoIndexes(appId: string): Promise<void>;
  /** The app's automatic indexes: built, queued, refused (admin API). None on PostgreSQL yet. */
  autoIndexes(appId: string): Promise<AutoIndexInfo[]>;
  /** Resolves once queued automatic index builds have run. */
  autoIndexesSettled(): Promise<void>;
  /** Closing, where builds can stop halfway and go on at the next start (SQLite); else autoIndexesSettled serves. */
  stopIndexBuilds?(): Promise<void>;
  /** EXPLAIN QUERY PLAN of the page query (tests and benchmarks check index use). */
  explainList(scope: RecordScope, conditions: Condition[], sort: SortKey[]): Promise<string[]>;
}

export interface InvitesRepository {
  /** Inserts the token unless the creator's quota is spent; the check and insert share one write lock. */
  create(row: InviteRow, limit: number | null): Promise<boolean>;
  /** Newest first. */
  list(appId: string, tenantId: string): Promise<InviteRow[]>;
  spent(appId: string, tenantId: string, now: number): Promise<number>;
  /** Deletes an unused token; a used one stays (it records who joined through it). */
  remove(appId: string, tenantId: string, id: string): Promise<RemoveOutcome>;
  findByHash(appId: string, hash: string): Promise<InviteRow | undefined>;
  /**
   * Marks the token used by `usedBy`. Synchronous: it runs inside the transaction that
   * creates the tenant (tenants.createWithSession), so a lost race rolls the sign-up back.
   */
  useInTransaction(appId: string, hash: string, usedBy: string, now: number): boolean;
}

export interface FamilyRepository {
  /** Inserts the invite unless members plus pending invites already fill `limit` seats. */
  createInvite(row: InviteRow, limit: number | null): Promise<boolean>;
  listInvites(appId: string, ownerId: string): Promise<InviteRow[]>;
  findInviteByHash(appId: string, hash: string): Promise<InviteRow | undefined>;
  /** Deletes an unused invite; a used one stays as the record of who joined. */
  revokeInvite(appId: string, ownerId: string, id: string): Promise<RemoveOutcome>;
  seatCounts(appId: string, ownerId: string, now: number): Promise<SeatCounts>;
  /** Members by join order (earliest first). */
  members(appId: string, ownerId: string): Promise<FamilyMemberRow[]>;
  membership(appId: string, memberId: string): Promise<Membership | undefined>;
  /** An existing tenant joins through the invite (replace-with-family). */
  join(appId: string, hash: string, memberId: string, limit: number | null, now: number): Promise<JoinOutcome>;
  /** Synchronous: for the transaction that creates the member's tenant row (sign-up). */
  joinInTransaction: (appId: string, hash: string, memberId: string, limit: number | null, now: number) => JoinOutcome;
  leave(appId: string, memberId: string): Promise<boolean>;
  removeMember(appId: string, ownerId: string, memberId: string): Promise<boolean>;
}

/** The developer dashboard's read queries over one app (every query carries the app id). */
export interface AdminRepository {
  searchTenants(appId: string, s: TenantSearch): Promise<{ tenants: TenantRow[]; total: number }>;
  tenantSessions(appId: string, tenantId: string): Promise<TenantSessionRow[]>;
  recordCounts(appId: string, tenantId: string): Promise<{ collection: string; count: number }[]>;
  /** Ids of a tenant's files, newest first (the files repository reads each row). */
  tenantFileIds(appId: string, tenantId: string, limit: number, offset: number): Promise<{ ids: string[]; total: number }>;
  /** The delivery log of one app, newest first (bodies not read), optionally of one status and one event. */
  deliveries(appId: string, status: DeliveryStatus | undefined, limit: number, offset: number, event?: string): Promise<{ deliveries: DeliveryRow[]; total: number }>;
  /** Turns a tenant's sign-in off (`at`, kept when already off) or back on (null). */
  setSignInDisabled(appId: string, tenantId: string, at: number | null): Promise<void>;
  /** When the developer turned the tenant's sign-in off, or null while it is on. */
  signInDisabledAt(tenantId: string): Promise<number | null>;
}

/**
 * State several nodes on one database must agree on. PostgreSQL only: SQLite serves one
 * process, which keeps rate-limit counters in memory and needs no lock between nodes.
 */
export interface ClusterRepository {
  /** Counts one request against each key's fixed window (opened at `now` when absent or over); returns each count and window end. */
  countRequests(keys: string[], windowMs: number, now: number): Promise<{ key: string; count: number; resetAt: number }[]>;
  /** Drops windows that ended before `now`, failures last seen before `failuresBefore` and devices no longer known. */
  sweepCounters(now: number, failuresBefore: number): Promise<number>;
  loginFailures(key: string): Promise<{ count: number; last: number } | undefined>;
  /** One more failure, or the first again when the previous one is older than `forgetBefore`. */
  recordLoginFailure(key: string, now: number, forgetBefore: number): Promise<void>;
  clearLoginFailures(key: string): Promise<void>;
  /** Forgets the failures of every key that starts with `prefix` (all of one account's). */
  clearLoginFailuresFrom(prefix: string): Promise<void>;
  /** Whether the device key signed in recently enough to be known at `now`. */
  knownDevice(key: string, now: number): Promise<boolean>;
  rememberDevice(key: string, until: number): Promise<void>;
  /** Runs `fn` while holding the named lock (transaction-scoped advisory lock): other nodes wait. */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Runs `fn` when no node holds the named job and none ran it after `ranBefore`; false when skipped. */
  runJob(name: string, ranBefore: number, now: number, fn: () => Promise<void>): Promise<boolean>;
}

/** The audit trail: per app an append-only chain of entries, each sealing the one before (src/audit). */
export interface AuditRepository {
  /**
   * Appends the entry at the end of its app's chain: `seal` gets the entry with its seq and
   * the previous entry's hash and returns its hash. Appends to one app are serialized
   * across processes and nodes, so the chain never forks.
   */
  append(entry: NewAuditEntry, seal: (e: Omit<AuditEntryRow, "hash">) => string): Promise<AuditEntryRow>;
  /** Newest first. */
  list(appId: string, filter: AuditFilter): Promise<AuditEntryRow[]>;
  head(appId: string): Promise<AuditHead | undefined>;
  /** The chain after `afterSeq`, oldest first, `limit` at a time (verification). */
  chain(appId: string, afterSeq: number, limit: number): Promise<AuditEntryRow[]>;
  /** Drops the entries older than `before` (a prefix of the chain), keeping the last dropped hash on the head. */
  prune(appId: string, before: number): Promise<number>;
  /** Apps with a chain (also apps deleted since: their trail stays until retention drops it). */
  apps(): Promise<string[]>;
}

/** Scheduled jobs (src/server-hooks/cron.ts): one claimed row per job and slot, so one node runs each. */
export interface CronRepository {
  /** Claims the job's slot for this node; false when another node (or an earlier tick) did. */
  claim(name: string, slot: number, node: string, now: number): Promise<boolean>;
  finish(name: string, slot: number, status: "ok" | "failed", error: string | null, now: number): Promise<void>;
  /** Newest first, `limit` per job. */
  recent(limit: number): Promise<CronRunRow[]>;
  /** Drops runs that started before `before`. */
  prune(before: number): Promise<number>;
}

/** Everything an engine provides; `close()` is the engine's own (file handle, pool). */
export interface Repositories {
  meta: MetaRepository;
  apps: AppsRepository;
  developers: DevelopersRepository;
  tenants: TenantsRepository;
  sessions: SessionsRepository;
  stats: StatsRepository;
  oauth: OAuthRepository;
  emailTokens: EmailTokensRepository;
  outbox: OutboxRepository;
  webhooks: WebhooksRepository;
  files: FilesRepository;
  billing: BillingRepository;
  records: RecordsRepository;
  invites: InvitesRepository;
  family: FamilyRepository;
  admin: AdminRepository;
  mfa: MfaRepository;
  signingKeys: SigningKeysRepository;
  signIn: SignInRepository;
  audit: AuditRepository;
  cron: CronRepository;
  orgs: OrgsRepository;
  orgBilling: OrgBillingRepository;
  realtime: RealtimeRepository;
  /** PostgreSQL only (see ClusterRepository). */
  cluster?: ClusterRepository;
}

/** Second factors, passkeys, MFA tickets and WebAuthn challenges, and each session's last authentication. */
export interface MfaRepository {
  totp(appId: string, tenantId: string): Promise<TotpRow | undefined>;
  /** Starts (or restarts) an enrolment; false when the tenant already has confirmed TOTP. */
  startTotp(row: TotpRow): Promise<boolean>;
  /** Confirms the pending enrolment at `step` and replaces the recovery codes, atomically; false when none is pending. */
  confirmTotp(appId: string, tenantId: string, step: number, codeHashes: string[], now: number): Promise<boolean>;
  /** Accepts a code's time step once: false when this step or a later one was accepted before. */
  useTotpStep(appId: string, tenantId: string, step: number): Promise<boolean>;
  /** Removes TOTP and the recovery codes; false when there was none. */
  disableTotp(appId: string, tenantId: string): Promise<boolean>;
  replaceRecoveryCodes(tenantId: string, codeHashes: string[], now: number): Promise<void>;
  /** Uses one recovery code; the number left, or null when the code is unknown or used. */
  useRecoveryCode(tenantId: string, codeHash: string, now: number): Promise<number | null>;
  recoveryCodesLeft(tenantId: string): Promise<number>;

  createChallenge(row: Omit<AuthChallengeRow, "attempts" | "usedAt">): Promise<void>;
  /** Looks at a challenge of this app and kind without using it. */
  peekChallenge(hash: string, appId: string, kind: AuthChallengeKind, now: number): Promise<ChallengeOutcome>;
  /** Uses a challenge once: of two concurrent uses, one gets it. */
  consumeChallenge(hash: string, appId: string, kind: AuthChallengeKind, now: number): Promise<ChallengeOutcome>;
  /** consumeChallenge, and (when it is used) the app's passkey of this credential id, read with it. */
  consumePasskeyChallenge(hash: string, appId: string, kind: AuthChallengeKind, now: number, credentialId: string): Promise<{ outcome: ChallengeOutcome; passkey?: PasskeyRow }>;
  /** Counts a wrong answer to a challenge; returns the attempts so far. */
  failChallenge(hash: string): Promise<number>;
  purgeChallenges(before: number): Promise<number>;

  insertPasskey(row: PasskeyRow): Promise<void>;
  passkeys(appId: string, tenantId: string): Promise<PasskeyRow[]>;
  passkeyByCredential(appId: string, credentialId: string): Promise<PasskeyRow | undefined>;
  renamePasskey(appId: string, tenantId: string, id: string, name: string): Promise<boolean>;
  removePasskey(appId: string, tenantId: string, id: string): Promise<boolean>;
  /** Moves the signature counter forward; false when another use got there first (a counter that goes back). */
  usePasskey(id: string, oldCounter: number, newCounter: number, at: number): Promise<boolean>;

  sessionAuth(sessionId: string): Promise<SessionAuth | undefined>;
  /** Sets the tenant's password and ends its sessions but `keepSessionId`, atomically. */
  changePassword(appId: string, tenantId: string, passwordHash: string, keepSessionId: string, now: number): Promise<void>;
  /** Records a fresh authentication on the session (re-authentication, a second factor). */
  markAuthenticated(sessionId: string, at: number, methods: string): Promise<void>;
}

export interface SigningKeysRepository {
  /** The app's keys: the current one first, then the retired, newest first. */
  listForApp(appId: string): Promise<SigningKeyRow[]>;
  findByKid(kid: string): Promise<SigningKeyRow | undefined>;
  /** Adds the app's first current key unless another was added meanwhile; the current key either way. */
  insertFirst(key: SigningKeyRow): Promise<SigningKeyRow>;
  /** Retires the current key at `key.createdAt`, drops keys retired before `dropRetiredBefore`, adds `key` as current. */
  rotate(key: SigningKeyRow, dropRetiredBefore: number): Promise<void>;
}

/** Email sign-in and anonymous tenants (issue 42 part B). */
export interface SignInRepository {
  /** Stores a request, replacing the address's older ones and dropping the app's expired ones. */
  issueEmailSignIn(row: EmailSignInRow, now: number): Promise<void>;
  /** Uses the request whose link this is. */
  consumeEmailLink(appId: string, linkHash: string, now: number): Promise<EmailSignInOutcome>;
  /**
   * Uses the address's live request when `codeHash` is its code; a wrong code counts an
   * attempt, and the request dies at `maxAttempts`.
   */
  consumeEmailCode(appId: string, email: string, codeHash: string, now: number, maxAttempts: number): Promise<EmailSignInOutcome>;
  /**
   * The tenant proved its inbox. Not verified before: now verified, and its password and
   * sessions go (whoever set them never proved the address: the pre-registration takeover).
   */
  proveInbox(appId: string, tenantId: string, now: number): Promise<void>;
  /** Inserts a tenant without a session (the sign-in then starts one); `anonymous` marks it so. */
  createTenant(tenant: TenantRow, anonymous: boolean): Promise<void>;
  isAnonymous(appId: string, tenantId: string): Promise<boolean>;
  /**
   * Gives an anonymous tenant its email (and password hash, or null), atomically with its
   * leaving the anonymous list; false when it is not anonymous (any more). Throws on a taken email.
   */
  upgradeAnonymous(appId: string, tenantId: string, email: string, passwordHash: string | null, verifiedAt: number | null, link?: OAuthLink): Promise<boolean>;
  /** Takes a tenant off the anonymous list, keeping its stand-in email (a passkey upgrade); false when it was not on it. */
  keepAnonymous(appId: string, tenantId: string): Promise<boolean>;
  /** The app's anonymous tenants made, signed in and refreshed last before `idleBefore`, oldest first. */
  idleAnonymous(appId: string, idleBefore: number, limit: number): Promise<string[]>;
  /**
   * A passkey sign-in's writes, at once: the passkey's counter moves from `use.oldCounter` to
   * `use.newCounter` ("counter" when another use moved it first: nothing written), then the
   * session starts unless sign-in is turned off for the tenant ("disabled": the counter moved).
   */
  passkeySession(use: PasskeyUse, tenantId: string, appId: string, session: NewSession): Promise<"started" | "counter" | "disabled">;
}

export interface PasskeyUse {
  passkeyId: string;
  oldCounter: number;
  newCounter: number;
  at: number;
}

/** Organizations, their members and invites (src/orgs). Every call names the app. */
export interface OrgsRepository {
  /** The organization and its first member, `ownerId` as owner, in one transaction; false when the owner already owns `cap`. */
  create(org: OrgRow, ownerId: string, cap: number | null): Promise<boolean>;
  /** The tenant's organizations with its role in each, oldest first. */
  forTenant(appId: string, tenantId: string): Promise<MemberOrgRow[]>;
  /** The organization as `tenantId` sees it; undefined when it is not a member (or there is none). */
  asMember(appId: string, orgId: string, tenantId: string): Promise<MemberOrgRow | undefined>;
  /** The operator's view (CLI): one organization, whoever asks. */
  byId(appId: string, orgId: string): Promise<OrgRow | undefined>;
  /** The operator's view (CLI): the app's organizations, newest first, with their member counts. */
  list(appId: string, limit: number, offset: number): Promise<{ orgs: (OrgRow & { members: number })[]; total: number }>;
  rename(appId: string, orgId: string, name: string, now: number): Promise<OrgRow | undefined>;
  /** Deletes the organization with its members and invites. */
  remove(appId: string, orgId: string): Promise<boolean>;
  /** `limit` members in join order, after `after` when given. */
  members(appId: string, orgId: string, limit: number, after?: MemberCursor): Promise<OrgMemberRow[]>;
  member(appId: string, orgId: string, tenantId: string): Promise<OrgMemberRow | undefined>;
  /** Sets the member's role while every `checks` role still holds; demoting the last owner is refused. */
  setRole(appId: string, orgId: string, tenantId: string, role: string, checks?: RoleCheck[]): Promise<MemberChange>;
  /** Removes the member (or the tenant leaving) while every `checks` role still holds; the last owner stays. */
  removeMember(appId: string, orgId: string, tenantId: string, checks?: RoleCheck[]): Promise<MemberChange>;
  /** `to` (a member) becomes owner and `from` (an owner) admin, together. */
  transfer(appId: string, orgId: string, from: string, to: string): Promise<MemberChange>;
  /**
   * Before a tenant's deletion: each organization it alone owns passes to its earliest admin,
   * else its earliest member (`newOwnerId`); one with no other member is deleted (`newOwnerId` null).
   */
  handOver(appId: string, tenantId: string): Promise<{ orgId: string; newOwnerId: string | null }[]>;
  seatCounts(appId: string, orgId: string, now: number): Promise<OrgSeatCounts>;
  /** Inserts the invite unless (for an email invite) members plus pending invites already fill `limit` seats. */
  createInvite(row: OrgInviteRow, limit: number | null): Promise<boolean>;
  /** Newest first. */
  listInvites(appId: string, orgId: string): Promise<OrgInviteRow[]>;
  findInviteByHash(appId: string, hash: string): Promise<OrgInviteRow | undefined>;
  /** Deletes an invite that is not used up; a used email invite stays as the record of who joined. */
  revokeInvite(appId: string, orgId: string, id: string): Promise<RemoveOutcome>;
  /**
   * The tenant (with `email`) joins through the invite: validity, its address, the seat check
   * and the membership row, all or nothing; concurrent joins of one organization take turns.
   */
  join(appId: string, hash: string, tenantId: string, email: string, limit: number | null, now: number): Promise<OrgJoinOutcome>;
  /** Synchronous: the same inside the transaction that creates the tenant (sign-up with an org invite). */
  joinInTransaction: (appId: string, hash: string, tenantId: string, email: string, limit: number | null, now: number) => OrgJoinOutcome;
}

/** Billing of organizations (src/orgs/billing.ts): the tenant billing tables' counterparts, plans shared. */
export interface OrgBillingRepository {
  subscriptions(appId: string, orgId: string): Promise<OrgSubscriptionRow[]>;
  findByProviderSubscription(appId: string, providerSubscriptionId: string): Promise<OrgSubscriptionRow | undefined>;
  /** Writes the organization's provider subscription; false when a live one for another subscription id is kept. */
  upsertProviderSubscription(s: OrgProviderSubscriptionWrite): Promise<boolean>;
  /** The paid seats of the organization's provider subscription `providerSubscriptionId`; false when it is not that one. */
  setSeats(appId: string, orgId: string, providerSubscriptionId: string, seats: number, now: number): Promise<boolean>;
  /** A gift or trial; replaces an earlier one of the same source. */
  upsertGrant(g: { appId: string; orgId: string; source: "gift" | "trial"; planId: string; expiresAt: number | null; now: number }): Promise<void>;
  removeSource(appId: string, orgId: string, source: SubscriptionSource): Promise<boolean>;
  setDevCancelAtPeriodEnd(appId: string, orgId: string, cancel: boolean, now: number): Promise<boolean>;
  stripeCustomer(appId: string, orgId: string): Promise<string | undefined>;
  orgForStripeCustomer(appId: string, customerId: string): Promise<string | undefined>;
  /** Keeps the first customer recorded for an organization; returns the one that is stored. */
  saveStripeCustomer(appId: string, orgId: string, customerId: string, now: number): Promise<string>;
  usage(appId: string, orgId: string, featureKey: string, period: string, periodStart: number): Promise<number>;
  /** Counters of the current month and day. */
  usageList(appId: string, orgId: string, monthStart: number, dayStart: number): Promise<UsageRow[]>;
  /** Adds `by` unless the result would pass `limit` (null = none); the new count, or undefined when refused. */
  incrementUsage(u: OrgUsageIncrement): Promise<number | undefined>;
}

/**
 * The realtime change feed and stream tickets (src/realtime). Record changes are appended
 * by the records repository inside each write's transaction (RecordScope.feed); tenant
 * events by `append`. `seq` order is commit order on both engines.
 */
export interface RealtimeRepository {
  /** Appends a change on its own; its seq. On PostgreSQL it wakes every node's tail (`r` on tenantd_changes). */
  append(change: NewRealtimeChange): Promise<number>;
  /** Every app's changes after `seq`, in order, at most `limit`. */
  tail(seq: number, limit: number): Promise<RealtimeChangeRow[]>;
  /** One tenant's changes after `seq`, in order, at most `limit` (a resumed stream's replay). */
  changesOf(appId: string, tenantId: string, seq: number, limit: number): Promise<RealtimeChangeRow[]>;
  /** The newest seq (0 when none). */
  head(): Promise<number>;
  /** Drops changes written before `before`; resume positions up to the last dropped seq then answer `reset`. */
  prune(before: number): Promise<void>;
  /** The last seq pruned: a resume from a position before it may have lost events. */
  prunedThrough(): Promise<number>;
  addTicket(hash: string, row: RealtimeTicketRow): Promise<void>;
  /** Uses a ticket once: of two concurrent uses, one gets it; expired or unknown: undefined. */
  takeTicket(hash: string, now: number): Promise<RealtimeTicketRow | undefined>;
  purgeTickets(now: number): Promise<number>;
  /** Announces `payload` to every node (tenantd_changes on PostgreSQL); nothing on SQLite, whose one process has no one to tell. */
  signal(payload: string): Promise<void>;
  /** Records that the app's writes are wanted until `until` (wall clock ms) and tells every node (`r+:<app>`); nothing on SQLite. */
  announce(appId: string, until: number): Promise<void>;
  /** The apps whose writes some node wants past `now`, and until when; none on SQLite. */
  interest(now: number): Promise<{ appId: string; until: number }[]>;
  /**
   * Those of `sessions` (the sessions of a node's open streams) that ended, expired, are gone
   * or are not their tenant's: checked together, one query on PostgreSQL, answering only them.
   */
  endedSessions(sessions: { id: string; tenantId: string }[], now: number): Promise<string[]>;
}
