/**
 * The resources tenantd's HTTP API answers with, as JSON (times are ISO 8601 strings).
 * Pure types, no runtime and no Node imports: an app backend, `tenantd/client` and tests
 * can share them. Each is checked against the value the server builds (test/public-types.test.ts),
 * so a field added on one side and not the other fails to compile.
 */

/** JSON values as stored in a record's `data`. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A record's `data` when its shape is not given: an object whose values are any JSON. */
export type RecordData = { [key: string]: unknown };

/** An end user of an app (the spec's Tenant). */
export interface Tenant {
  id: string;
  email: string;
  emailVerifiedAt: string | null;
  createdAt: string;
}

/** One JSON record of a collection; `T` is the shape of `data`. */
export interface DataRecord<T extends object = RecordData> {
  id: string;
  data: T;
  createdAt: string;
  updatedAt: string;
}

/** A page of `GET /api/v1/data/{collection}`: `total` counts every match, not only this page. */
export interface FindResult<T extends object = RecordData> {
  records: DataRecord<T>[];
  total: number;
  limit: number;
  offset: number;
  /** the cursor of the next page (send it as `after`); absent on the last page */
  next?: string;
}

/** An uploaded file (the spec's FileInfo); `url` is public. */
export interface FileInfo {
  id: string;
  url: string;
  pathname: string;
  sizeBytes: number;
  mimeType: string;
  /** the name the file was uploaded with, if it had one */
  originalFilename: string | null;
  createdAt: string;
}

/** A share link of a record; `token` is shown once, when the link is made. */
export interface ShareToken {
  id: string;
  token: string;
  expiresAt: string | null;
  createdAt: string;
}

/** Feature keys to a limit (number), a switch (boolean). */
export type Entitlements = Record<string, boolean | number>;

/** A tenant's effective subscription and where it comes from. */
export interface Subscription {
  planId: string;
  planName: string;
  planSlug: string;
  status: "active" | "past_due" | "canceled" | "trialing" | "unpaid";
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  source?: "billing_provider" | "gift" | "trial" | "family";
  giftExpiresAt?: string | null;
  trialUntil?: string | null;
  familyOwnerEmail?: string | null;
}

/** A plan as tenants see it (`GET /api/v1/billing/plans`). */
export interface PlanInfo {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  priceCents: number;
  currency: string;
  interval: "month" | "year";
  sortOrder: number;
  entitlements: Entitlements;
}

/** A usage counter of the current UTC month or day; `limit` null means no limit. */
export interface UsageCounter {
  count: number;
  period: "monthly" | "daily";
  limit: number | null;
}

/** Event names tenantd sends today. Receivers must ignore names they do not know. */
export type WebhookEventName = "tenant.deleted" | "tenant.email.resend_verification";

/** The JSON body of a webhook delivery (verify the signature over the raw bytes first). */
export type WebhookEvent =
  | WebhookEnvelope<"tenant.deleted", { reason: "self_delete" | "admin_delete" | "anonymous_idle"; locale: string }>
  | WebhookEnvelope<"tenant.email.resend_verification", { verifyToken: string; verifyUrl: string; expiresAt: string }>;

export interface WebhookEnvelope<E extends string = string, P = Record<string, unknown>> {
  event: E;
  /** Unix seconds, the same value as the `x-service-timestamp` header. */
  timestamp: number;
  appId: string;
  tenantId: string | null;
  email: string | null;
  payload: P;
}

/** Every non-2xx body. `error` is a code of `ERROR_CODES`. */
export interface ErrorBody {
  error: string;
  message: string;
}
