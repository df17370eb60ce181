export { createTenantBackend, type TenantBackend } from "./app.ts";
export { createCore, type Core } from "./core.ts";
export { resolveConfig, ConfigError, type TenantBackendConfig, type ResolvedConfig } from "./config.ts";
export { ERROR_CODES, type ErrorCode } from "./errors.ts";
export { attachJsonClientErrors } from "./http/node-errors.ts";
export type { AdminApi } from "./admin/api.ts";
export type { AppSettings } from "./apps/settings.ts";
