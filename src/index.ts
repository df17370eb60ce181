export { createTenantBackend, type TenantBackend } from "./app.ts";
export type { FetchClient } from "./embed/fetch.ts";
export { createCore, type Core } from "./core.ts";
export { resolveConfig, ConfigError, type TenantBackendConfig, type ResolvedConfig } from "./config.ts";
export { ERROR_CODES, type ErrorCode } from "./errors.ts";
export { attachJsonClientErrors } from "./http/node-errors.ts";
export { toFastifyHook, toNodeHandler, type NodeHandler } from "./http/node-handler.ts";
export type { AdminApi } from "./admin/api.ts";
export type { AppSettings } from "./apps/settings.ts";
export type {
  DataRecord,
  Entitlements,
  ErrorBody,
  FileInfo,
  FindResult,
  JsonValue,
  RecordData,
  PlanInfo,
  ShareToken,
  Subscription,
  Tenant,
  UsageCounter,
  WebhookEnvelope,
  WebhookEvent,
  WebhookEventName,
} from "./types/resources.ts";
export { defineHooks, cron, refuse } from "./server-hooks/types.ts";
export type { ServerHooks, RecordHooks, AuthHooks, BillingHooks, RecordContext, RouteContext, RouteHandler, CronJob, CronContext, HookApp } from "./server-hooks/types.ts";
export { audit, type AuditInput, type AuditEntry, type AuditActor, type AuditOrigin } from "./audit/audit.ts";
