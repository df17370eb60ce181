import * as v from "valibot";

/**
 * The response bodies tenantd answers with, as valibot schemas. The OpenAPI document is
 * generated from them, the contract test checks real responses against that document, and
 * `tenantd/client` imports their inferred types (type-only: the client ships no valibot).
 * Strict objects: a field the server adds without a schema fails the contract test.
 */
const obj = v.strictObject;
const iso = v.pipe(v.string(), v.isoTimestamp());
const isoOrNull = v.nullable(iso);
const JsonObject = v.record(v.string(), v.unknown());

export const Tenant = obj({ id: v.string(), email: v.string(), emailVerifiedAt: isoOrNull, createdAt: iso });

export const TokenPair = obj({
  accessToken: v.string(),
  refreshToken: v.string(),
  /** seconds */
  expiresIn: v.number(),
  /** seconds */
  refreshExpiresIn: v.number(),
});
export const AuthReply = obj({ tenant: Tenant, ...TokenPair.entries });
export const TenantReply = obj({ tenant: Tenant });
export const Ok = obj({ ok: v.literal(true) });
export const ResetTokenReply = obj({ resetToken: v.string(), locale: v.string() });

export const SubscriptionStatus = v.picklist(["active", "past_due", "canceled", "trialing", "unpaid"]);
export const Subscription = obj({
  planId: v.string(),
  planName: v.string(),
  planSlug: v.string(),
  status: SubscriptionStatus,
  currentPeriodEnd: isoOrNull,
  cancelAtPeriodEnd: v.boolean(),
  source: v.picklist(["billing_provider", "gift", "trial", "family"]),
  giftExpiresAt: v.optional(isoOrNull),
  trialUntil: v.optional(isoOrNull),
  familyOwnerEmail: v.optional(v.string()),
});
export const Entitlements = v.record(v.string(), v.union([v.boolean(), v.number()]));

export const Introspection = obj({
  active: v.boolean(),
  tenantId: v.nullable(v.string()),
  appId: v.nullable(v.string()),
  exp: isoOrNull,
  parentTenantId: v.nullable(v.string()),
  subscription: v.optional(v.nullable(Subscription)),
  tenant: v.optional(v.nullable(Tenant)),
  /** present only for a developer's read-only impersonation session: the developer's id */
  impersonatedBy: v.optional(v.string()),
});
export const ResendVerificationAdminReply = obj({ ok: v.literal(true), sentBy: v.string(), expiresAt: iso });

export const DataRecord = obj({ id: v.string(), data: JsonObject, createdAt: iso, updatedAt: iso });
export const RecordReply = obj({ record: DataRecord });
export const RecordList = obj({ records: v.array(DataRecord), total: v.number(), limit: v.number(), offset: v.number(), next: v.optional(v.string()) });
export const UpsertReply = obj({ record: DataRecord, created: v.boolean() });
/** One operation's answer in a batch: its single call's status, and that call's body fields. */
export const BatchResult = v.union([
  obj({ status: v.number(), record: DataRecord }),
  obj({ status: v.number(), record: DataRecord, created: v.boolean() }),
  obj({ status: v.number() }),
  obj({ status: v.number(), count: v.number(), period: v.picklist(["monthly", "daily"]), limit: v.nullable(v.number()) }),
]);
export const BatchReply = obj({ results: v.array(BatchResult) });
export const ShareReply = obj({ shareToken: obj({ id: v.string(), token: v.string(), expiresAt: isoOrNull, createdAt: iso }) });
export const RevokeSharesReply = obj({ revoked: v.number() });

export const FileInfo = obj({
  id: v.string(),
  url: v.string(),
  pathname: v.string(),
  sizeBytes: v.number(),
  mimeType: v.string(),
  originalFilename: v.nullable(v.string()),
  createdAt: iso,
});
export const FileReply = obj({ file: FileInfo });

export const Plan = obj({
  id: v.string(),
  name: v.string(),
  slug: v.string(),
  description: v.nullable(v.string()),
  priceCents: v.number(),
  currency: v.string(),
  interval: v.picklist(["month", "year"]),
  sortOrder: v.number(),
  entitlements: Entitlements,
});
export const PlansReply = obj({ plans: v.array(Plan) });
export const UrlReply = obj({ url: v.string() });
export const SubscriptionReply = obj({ subscription: v.nullable(Subscription) });
export const EntitlementsReply = obj({ entitlements: Entitlements });
export const Usage = obj({ count: v.number(), period: v.picklist(["monthly", "daily"]), limit: v.nullable(v.number()) });

export const Invite = obj({
  id: v.string(),
  note: v.nullable(v.string()),
  status: v.picklist(["pending", "used", "expired"]),
  createdAt: iso,
  expiresAt: iso,
  usedAt: isoOrNull,
  usedByTenantId: v.nullable(v.string()),
});
const CreatedInvite = obj({ ...Invite.entries, token: v.string() });
export const InviteQuota = obj({ limit: v.nullable(v.number()), used: v.number(), remaining: v.nullable(v.number()) });
export const InviteTokenCreated = obj({ token: CreatedInvite, quota: InviteQuota });
export const InviteTokenList = obj({ tokens: v.array(Invite), quota: InviteQuota });
export const InviteQuotaReply = obj({ quota: InviteQuota });

export const Seats = obj({ limit: v.nullable(v.number()), used: v.number(), pending: v.number(), remaining: v.nullable(v.number()) });
export const FamilyInviteCreated = obj({ invite: CreatedInvite, seats: Seats });
export const FamilyInviteList = obj({ invites: v.array(Invite), seats: Seats });
export const FamilyInviteRevoked = obj({ ok: v.literal(true), revokedInviteId: v.string(), seats: Seats });
export const FamilyMembers = obj({ members: v.array(obj({ tenantId: v.string(), email: v.string(), joinedAt: iso, active: v.boolean() })) });
export const FamilyConsumed = v.union([
  obj({ result: v.literal("new"), tenant: Tenant, ...TokenPair.entries, parentTenantId: v.string() }),
  obj({ result: v.literal("email_exists"), message: v.string() }),
]);
export const FamilyReplaced = obj({ ok: v.literal(true), parentTenantId: v.string(), ...TokenPair.entries });
export const FamilyMemberRemoved = obj({ ok: v.literal(true), removedMemberTenantId: v.string() });
export const AccountDeleted = obj({ ok: v.literal(true), deleted: v.literal(true) });
export const LinkedProviders = obj({ providers: v.array(obj({ provider: v.string(), linkedAt: iso, email: v.nullable(v.string()) })) });

// Developer and admin API.
export const Developer = obj({ id: v.string(), email: v.string(), createdAt: iso });
export const DeveloperLogin = obj({ token: v.string(), expiresAt: iso, developer: Developer });
export const DeveloperReply = obj({ developer: Developer });
const UsageTotals = { tenants: v.number(), records: v.number(), fileBytes: v.number(), webhookDeliveriesThisMonth: v.number() };
export const DeveloperUsage = obj({
  period: obj({ start: iso, end: iso }),
  totals: obj({ apps: v.number(), ...UsageTotals }),
  apps: v.array(obj({ appId: v.string(), ...UsageTotals })),
});
export const App = obj({
  id: v.string(),
  name: v.string(),
  publishableKey: v.string(),
  ownerId: v.nullable(v.string()),
  hasSecretKey: v.boolean(),
  /** Secrets read back as "[encrypted]"; the settings reference is docs/admin.md. */
  settings: JsonObject,
  createdAt: iso,
  updatedAt: iso,
});
export const AppReply = obj({ app: App });
export const AppList = obj({ apps: v.array(App) });
export const SecretKeyReply = obj({ secretKey: v.string() });
export const TenantList = obj({ tenants: v.array(Tenant), total: v.number(), limit: v.number(), offset: v.number() });
export const AdminPlan = obj({
  ...Plan.entries,
  stripeProductId: v.nullable(v.string()),
  stripePriceId: v.nullable(v.string()),
  archived: v.boolean(),
  archivedAt: isoOrNull,
  createdAt: iso,
  updatedAt: iso,
});
export const AdminPlanReply = obj({ plan: AdminPlan });
export const AdminPlanList = obj({ plans: v.array(AdminPlan) });
export const TenantBilling = obj({
  tenantId: v.string(),
  subscription: v.nullable(Subscription),
  entitlements: Entitlements,
  sources: v.array(
    obj({
      source: v.picklist(["billing_provider", "gift", "trial"]),
      plan: v.nullable(Plan),
      status: v.nullable(v.string()),
      provider: v.nullable(v.string()),
      providerSubscriptionId: v.nullable(v.string()),
      currentPeriodEnd: isoOrNull,
      cancelAtPeriodEnd: v.boolean(),
      expiresAt: isoOrNull,
      updatedAt: iso,
    }),
  ),
  stripeCustomerId: v.nullable(v.string()),
  usage: v.array(obj({ featureKey: v.string(), period: v.picklist(["monthly", "daily"]), count: v.number(), limit: v.nullable(v.number()) })),
});
export const WebhookConfig = obj({ url: v.nullable(v.string()), secretCreatedAt: isoOrNull, createdAt: isoOrNull, updatedAt: isoOrNull, secret: v.optional(v.nullable(v.string())) });
const WebhookDeliveryFields = {
  id: v.string(),
  event: v.string(),
  tenantId: v.nullable(v.string()),
  status: v.picklist(["sending", "delivered", "failed", "invalid_config"]),
  url: v.nullable(v.string()),
  statusCode: v.nullable(v.number()),
  error: v.nullable(v.string()),
  durationMs: v.nullable(v.number()),
  createdAt: iso,
  finishedAt: isoOrNull,
};
export const WebhookDelivery = obj({
  ...WebhookDeliveryFields,
  body: v.nullable(v.string()),
  bodyNote: v.nullable(v.string()),
});
export const WebhookDeliveries = obj({
  deliveries: v.array(obj(WebhookDeliveryFields)),
  total: v.number(),
  queued: v.number(),
  limit: v.number(),
  offset: v.number(),
});
// The dashboard's views of one tenant (admin API).
export const AdminTenant = obj({ ...Tenant.entries, locale: v.string(), hasPassword: v.boolean(), signInDisabledAt: isoOrNull });
export const AdminSession = obj({ id: v.string(), createdAt: iso, expiresAt: iso, endedAt: isoOrNull, endReason: v.nullable(v.string()), active: v.boolean() });
export const AdminFile = obj({ ...FileInfo.entries, previewable: v.boolean() });
export const TenantFiles = obj({ files: v.array(AdminFile), total: v.number(), limit: v.number(), offset: v.number() });
export const TenantOverview = obj({
  tenant: AdminTenant,
  /** the 50 newest sessions, live or not */
  sessions: v.array(AdminSession),
  billing: TenantBilling,
  invites: InviteTokenList,
  family: obj({
    owner: v.nullable(obj({ tenantId: v.string(), email: v.string() })),
    members: v.array(obj({ tenantId: v.string(), email: v.string(), joinedAt: iso })),
  }),
  collections: v.array(obj({ collection: v.string(), count: v.number() })),
  /** the 50 newest files */
  files: TenantFiles,
});
export const RecordIndexes = obj({
  declared: v.array(obj({ collection: v.string(), field: v.string() })),
  automatic: v.array(
    obj({
      collection: v.string(),
      field: v.string(),
      state: v.picklist(["ready", "pending", "refused"]),
      reason: v.nullable(v.string()),
      rows: v.nullable(v.number()),
      buildMs: v.nullable(v.number()),
      createdAt: isoOrNull,
      lastUsedAt: isoOrNull,
    }),
  ),
  total: v.number(),
  limit: v.number(),
  offset: v.number(),
});
export const Health = obj({ status: v.literal("ok"), version: v.string() });
export const Ready = obj({ status: v.literal("ready"), version: v.string() });
export const ServerInfo = obj({ name: v.literal("tenantd"), description: v.string(), version: v.string(), api: v.string(), health: v.string(), ready: v.string(), docs: v.string() });
export const SessionsEnded = obj({ ended: v.number() });
export const WebhookTestQueued = obj({ ok: v.literal(true), event: v.literal("webhook.test") });
export const OutboxMessages = obj({
  messages: v.array(
    obj({
      id: v.string(),
      kind: v.string(),
      to: v.string(),
      subject: v.string(),
      locale: v.string(),
      link: v.nullable(v.string()),
      text: v.string(),
      tenantId: v.nullable(v.string()),
      createdAt: iso,
    }),
  ),
});
export const StripeReceived = obj({ received: v.literal(true), duplicate: v.boolean() });

/** Every non-2xx body. The document narrows `error` to each route's codes per status. */
export const ErrorBody = obj({ error: v.string(), message: v.string() });

/** The body of every webhook delivery (signed with `x-service-signature`). */
export const WebhookEvent = obj({
  event: v.string(),
  /** unix seconds, the same value as the signature's t= */
  timestamp: v.number(),
  appId: v.string(),
  tenantId: v.nullable(v.string()),
  email: v.nullable(v.string()),
  payload: JsonObject,
});

export const AuditEntry = obj({
  id: v.string(),
  seq: v.number(),
  at: iso,
  actor: obj({ type: v.picklist(["developer", "tenant", "operator", "system"]), id: v.nullable(v.string()) }),
  action: v.string(),
  tenantId: v.nullable(v.string()),
  target: v.nullable(v.string()),
  ip: v.nullable(v.string()),
  client: v.nullable(v.string()),
  requestId: v.nullable(v.string()),
  details: v.nullable(JsonObject),
  hash: v.string(),
  prevHash: v.string(),
});
export const AuditPage = obj({ entries: v.array(AuditEntry), nextCursor: v.nullable(v.string()) });
export const ActivityEntry = obj({
  id: v.string(),
  at: iso,
  action: v.string(),
  /** `you`, or who else acted on the account: developer, operator, system */
  actor: v.string(),
  ip: v.nullable(v.string()),
  client: v.nullable(v.string()),
  details: v.nullable(JsonObject),
});
export const ActivityPage = obj({ activity: v.array(ActivityEntry), nextCursor: v.nullable(v.string()) });
export const CronRuns = obj({
  /** the node that answered */
  node: v.string(),
  jobs: v.array(
    obj({
      name: v.string(),
      /** null for a job this node does not define (runs of a job since removed, or defined on other nodes only) */
      schedule: v.nullable(v.string()),
      runs: v.array(obj({ scheduledAt: iso, node: v.string(), startedAt: iso, finishedAt: isoOrNull, status: v.picklist(["running", "ok", "failed"]), error: v.nullable(v.string()) })),
    }),
  ),
});
// The dashboard's tools (issue 45).
export const RecordsDeleted = obj({ deleted: v.number() });
export const WebhookRedelivered = obj({ ok: v.literal(true), event: v.string() });
export const EmailPreviews = obj({
  from: v.string(),
  transport: v.string(),
  previews: v.array(obj({ kind: v.picklist(["verify", "reset"]), locale: v.picklist(["en", "es", "nl"]), subject: v.string(), text: v.string(), link: v.string() })),
});
export const EmailTestSent = obj({ ok: v.literal(true), to: v.string(), transport: v.string() });
export const AccessLog = obj({
  entries: v.array(obj({ at: v.string(), method: v.string(), route: v.string(), status: v.number(), ms: v.number(), requestId: v.string() })),
  kept: v.number(),
});
const Backup = obj({ name: v.string(), bytes: v.number(), createdAt: iso });
export const BackupList = obj({ operator: v.boolean(), unsupported: v.nullable(v.string()), backups: v.array(Backup), restoreCommand: v.string() });
export const BackupMade = obj({ backup: Backup });
export const BackupLink = obj({ path: v.string(), expiresAt: iso });
export const ExportLinkSent = obj({ sentTo: v.string(), expiresAt: iso });
export const Impersonation = obj({ accessToken: v.string(), appId: v.string(), sessionId: v.string(), tenant: Tenant, readOnly: v.literal(true), expiresAt: iso, expiresIn: v.number() });
export const SignInState = obj({ tenant: Tenant, signInDisabledAt: isoOrNull, sessionsEnded: v.number() });

// Realtime (docs/realtime.md).
export const RealtimeTicket = obj({ ticket: v.string(), expiresIn: v.number() });
const RealtimeSubscriptionInfo = obj({ id: v.string(), collection: v.string(), filter: v.nullable(v.record(v.string(), v.unknown())), record: v.nullable(v.string()) });
export const RealtimeSubscribed = v.union([obj({ subscription: RealtimeSubscriptionInfo }), obj({ subscriptions: v.array(RealtimeSubscriptionInfo) })]);
export const RealtimeRemoved = obj({ removed: v.array(v.string()) });
