import type { PublicRecord } from "../data/records.ts";
import { fail } from "../errors.ts";
import type { HTTPError } from "h3";

/** What every hook is told: the app and, for a tenant's action, the tenant. */
export interface HookApp {
  id: string;
  name: string;
}

export interface RecordContext {
  app: HookApp;
  tenantId: string;
  collection: string;
}

type Maybe<T> = T | void | undefined | Promise<T | void | undefined>;

/** Record hooks. A `before` hook may return a replacement (the data, or the patch) or throw `refuse()`. */
export interface RecordHooks {
  beforeCreate?(ctx: RecordContext & { data: Record<string, unknown> }): Maybe<Record<string, unknown>>;
  afterCreate?(ctx: RecordContext & { record: PublicRecord }): Maybe<void>;
  beforeUpdate?(ctx: RecordContext & { id: string; patch: Record<string, unknown> }): Maybe<Record<string, unknown>>;
  afterUpdate?(ctx: RecordContext & { record: PublicRecord }): Maybe<void>;
  beforeDelete?(ctx: RecordContext & { id: string }): Maybe<void>;
  afterDelete?(ctx: RecordContext & { id: string }): Maybe<void>;
}

export interface AuthHooks {
  /** `method` is `password` or `oauth:<provider>`. */
  afterSignup?(ctx: { app: HookApp; tenantId: string; email: string; method: string }): Maybe<void>;
  afterLogin?(ctx: { app: HookApp; tenantId: string; method: string }): Maybe<void>;
  afterDelete?(ctx: { app: HookApp; tenantId: string; email: string; reason: "self_delete" | "admin_delete" | "anonymous_idle" }): Maybe<void>;
}

export interface BillingHooks {
  /** A provider (Stripe, or the development provider) created or changed the tenant's subscription. */
  subscriptionChanged?(ctx: { app: HookApp; tenantId: string; planId: string; status: string; provider: "stripe" | "dev" }): Maybe<void>;
}

/** A custom route's input: the signed-in tenant, the request, its params, query and JSON body. */
export interface RouteContext {
  app: HookApp;
  tenantId: string;
  request: Request;
  params: Record<string, string>;
  query: Record<string, string>;
  /** the parsed JSON body, or undefined when the request sent none */
  body: unknown;
  /** The developer's id when this is a developer's read-only impersonation session (only GET routes see one). */
  impersonatedBy?: string;
}

/** A route handler answers a value (sent as JSON), a `Response`, or nothing (204). */
export type RouteHandler = (ctx: RouteContext) => unknown;

export interface CronContext {
  name: string;
  /** the scheduled time this run stands for */
  scheduledAt: Date;
}

export interface CronJob {
  name: string;
  schedule: string;
  fn: (ctx: CronContext) => unknown;
  /** ms a run may take before it is recorded as failed (default 60 s) */
  timeoutMs?: number;
}

/** The hooks module's default export (docs/hooks.md). */
export interface ServerHooks {
  records?: RecordHooks;
  auth?: AuthHooks;
  billing?: BillingHooks;
  /** Routes under `/api/v1/x/`, keyed `"GET /path/:param"`; the tenant is signed in. */
  routes?: Record<string, RouteHandler>;
  cron?: CronJob[];
  /** ms a hook (not a cron job) may take before the request answers 500 `hook_failed` (default 5000). */
  timeoutMs?: number;
}

/** Types a hooks module: `export default defineHooks({ … })`. */
export const defineHooks = (hooks: ServerHooks): ServerHooks => hooks;

/**
 * A job run once per schedule across every node: `"every 30s"` (also m, h, d; aligned to
 * the epoch) or a five-field cron expression in UTC (`"0 3 * * *"`).
 */
export const cron = (name: string, schedule: string, fn: CronJob["fn"], opts: { timeoutMs?: number } = {}): CronJob => ({ name, schedule, fn, ...opts });

/**
 * Thrown by a `before` hook to refuse the write: the client gets this status's code and the
 * message as written.
 */
export function refuse(message: string, code: "invalid_request" | "forbidden" | "conflict" = "forbidden"): HTTPError {
  return fail(code, message);
}
