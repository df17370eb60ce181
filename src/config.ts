import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import * as v from "valibot";
import type { Driver } from "unstorage";
import { systemClock, type Clock } from "./clock.ts";
import { createConsoleLogger, LOG_LEVELS, safeLogger, type LogFormat, type Logger, type LogLevel } from "./log.ts";
import { OWASP_ARGON2, type Argon2Params } from "./crypto/password.ts";
import type { DatabaseConfig } from "./db/store.ts";
import { collectOptions, describeSource, type Layer, type OptionRow } from "./config-options.ts";
import { toTrustProxy, type TrustProxy, type TrustProxyOption } from "./http/trust-proxy.ts";
import { BUCKET_NAME, resolveStorageChoice, type StorageChoice, type StorageOptions } from "./files/storage-config.ts";
import type { ServerHooks } from "./server-hooks/types.ts";

/** Options of `createTenantBackend(config)`. Every field is optional. See docs/configuration.md. */
export interface TenantBackendConfig {
  /** Folder for the SQLite database, blobs and the generated server key. Env `TENANTD_DATA_DIR`; default `./.tenantd`. */
  dataDir?: string;
  /** SQLite file. Default `<dataDir>/tenantd.db`. */
  databasePath?: string;
  /** PostgreSQL instead of SQLite (docs/scaling.md): `url` postgres://…, `pool.max` connections per process (default 10). */
  database?: { url: string; pool?: { max?: number } };
  /** Where file blobs go: any unstorage driver, or `{ driver: "s3", bucket, region, endpoint, accessKeyId, secretAccessKey }` (docs/files.md). Env `TENANTD_STORAGE`; default: the fs driver at `<dataDir>/files`. */
  storage?: Driver | StorageOptions;
  /** 32-byte server key (hex or base64) that encrypts stored secrets and signs access tokens. Env `TENANTD_SECRET_KEY`; default: generated once into `<dataDir>/secret.key`. */
  secretKey?: string;
  /** Public base URL of this server, used in links it hands out (file URLs, checkout pages, OAuth callbacks, email links). Env `TENANTD_PUBLIC_URL`; default `http://localhost:3000`. */
  publicUrl?: string;
  /** `development` (outbox mail, development billing, links in logs) or `production`. Env `TENANTD_MODE`; default production when NODE_ENV=production, else development. */
  mode?: "development" | "production";
  /** Largest JSON request body in bytes. Default 1 MiB. */
  maxJsonBytes?: number;
  /** argon2id cost. Default OWASP's (m=19456 KiB, t=2, p=1). Lower it only in tests. */
  argon2?: Partial<Argon2Params>;
  /** Proxies in front of this server whose `x-forwarded-for` is believed: `true` (one hop), a hop count, or their addresses/CIDRs. Default false. See docs/security.md. */
  trustProxy?: TrustProxyOption;
  /** Seconds a rotated refresh token still returns its (same) successor, for tabs refreshing at once. Default 5. */
  refreshReuseGraceSeconds?: number;
  /** A request body (JSON or upload) that sends nothing for this many seconds is refused with 408. Default 30. */
  bodyIdleTimeoutSeconds?: number;
  /** Per-IP and per-email limits on the unauthenticated auth endpoints; `false` turns them off. */
  rateLimit?: false | Partial<RateLimitConfig>;
  /** How tenant emails (verification, reset) leave the server. Default: the development outbox (development mode only). */
  email?: EmailConfig;
  /** Outgoing webhooks. */
  webhooks?: Partial<WebhookConfig>;
  /** Realtime streams (docs/realtime.md): the resume window and the limits. */
  realtime?: Partial<RealtimeConfig>;
  /** File uploads and their public URLs. */
  files?: { maxBytes?: number; cdnBaseUrl?: string; publicBaseUrl?: string };
  /**
   * Serve the development billing provider (local checkout pages that take no payment) for
   * apps without Stripe keys. Env `TENANTD_DEV_BILLING`; default on in development, off in production.
   */
  devBilling?: boolean;
  /** Override where the Stripe client connects (tests point it at a local fake). */
  stripeApi?: { host: string; port: number; protocol: "http" | "https" };
  /** On an empty database, create a default app and print its credentials. Default true. */
  bootstrap?: boolean;
  /** The developer dashboard (docs/dashboard.md): `false` turns it off; `path` moves it. Default `{ path: "/_" }`. */
  dashboard?: false | { path?: string };
  /** Injected clock (ms since epoch); tests use it to expire tokens without sleeping. */
  clock?: Clock;
  /** A logger (secrets are redacted before it sees a line), or the level for the built-in stderr logger. Default "info". */
  logger?: Logger | LogLevel;
  /** Line format of the built-in logger. Env `TENANTD_LOG_FORMAT`; default `pretty`. */
  logFormat?: LogFormat;
  /** One log line per request (method, route, status, ms, app, request id). Default true. */
  accessLog?: boolean;
  /** How long `close()` (and a stop signal) waits for requests in flight, in ms. Default 10000. */
  drainTimeoutMs?: number;
  /**
   * Prometheus metrics at `GET /metrics` (docs/deployment.md#metrics). Off by default; on with
   * `true`, or when `token` or `port` is set: `token` guards it on the main port, `port` (and
   * `host`, default 127.0.0.1) serves it on a listener of its own.
   */
  metrics?: boolean | { token?: string; port?: number; host?: string };
  /**
   * Server-side hooks and cron jobs (docs/hooks.md): the object `defineHooks({ … })` returns,
   * or, in a config file, the path of a module whose default export it is.
   */
  hooks?: ServerHooks | string;
  /** `tenantd serve` only: port to listen on. */
  port?: number;
  /** `tenantd serve` only: interface to listen on. */
  host?: string;
}

export interface RateLimitConfig {
  /** Window length in seconds. */
  windowSeconds: number;
  /** Requests per window per client IP, per endpoint. */
  perIp: number;
  /** Requests per window per email address, per endpoint. */
  perEmail: number;
}

export interface EmailConfig {
  /** `outbox` stores and logs messages (development); `smtp` sends through nodemailer. */
  transport?: "outbox" | "smtp";
  smtp?: { host: string; port: number; secure?: boolean; user?: string; pass?: string; ignoreTLS?: boolean };
  /** Default sender, e.g. `"My App <no-reply@example.com>"`. */
  from?: string;
}

export interface WebhookConfig {
  /** Allow `http://` URLs and loopback/private targets. Development and tests only. Env `TENANTD_WEBHOOKS_ALLOW_INSECURE=1`. */
  allowInsecure: boolean;
  /** Receiver answer limit in ms (the spec's 1.5 s). */
  timeoutMs: number;
}

/** Realtime streams (src/realtime, docs/realtime.md). Connection limits count per node. */
export interface RealtimeConfig {
  /** How long missed events can be replayed to a stream resuming with Last-Event-ID. Default 300. */
  retentionSeconds: number;
  /** A keep-alive comment (and resume position) this often on an idle stream. Default 15. */
  keepAliveSeconds: number;
  /** Open streams per tenant, and the dashboard's live views per developer (per node). Default 10. */
  maxConnectionsPerTenant: number;
  /** Open streams per client IP (per node). Default 100. */
  maxConnectionsPerIp: number;
  /** Subscriptions on one stream. Default 100. */
  maxSubscriptionsPerConnection: number;
  /** Characters of one subscription's filter as JSON. Default 4096. */
  maxFilterBytes: number;
  /** Bytes a stream may have waiting for a slow client before it is dropped (with a final `dropped` event). Default 1048576. */
  maxBufferedBytes: number;
}

export interface FilesConfig {
  /** Largest file in bytes. Default 10 MB, meaning 10 MiB (10 * 1024 * 1024 = 10,485,760 bytes). */
  maxBytes: number;
  /**
   * Origin of a CDN (or any caching proxy) in front of this server: file URLs become
   * `<cdnBaseUrl>/api/v1/public/files/<id>/<name>` instead of starting with `publicUrl`. Default none.
   */
  cdnBaseUrl: string | null;
  /** Base URL that serves the blobs themselves (a CDN on the bucket): file URLs become `<publicBaseUrl>/<pathname>`. Default none. */
  publicBaseUrl: string | null;
}

export interface ResolvedConfig {
  mode: "development" | "production";
  dataDir: string;
  databasePath: string;
  database: DatabaseConfig | undefined;
  storage: Driver | undefined;
  /** The storage the options choose when no driver object is passed (files/storage.ts opens it). */
  storageChoice: StorageChoice;
  serverKey: Buffer;
  publicUrl: string;
  maxJsonBytes: number;
  argon2: Argon2Params;
  trustProxy: TrustProxy;
  refreshReuseGraceSeconds: number;
  bodyIdleTimeoutSeconds: number;
  rateLimit: RateLimitConfig | false;
  email: Required<Pick<EmailConfig, "transport" | "from">> & Pick<EmailConfig, "smtp">;
  /** The mail transport was set by the operator (option, file, env), not defaulted. */
  emailChosen: boolean;
  webhooks: WebhookConfig;
  realtime: RealtimeConfig;
  files: FilesConfig;
  devBilling: boolean;
  stripeApi: TenantBackendConfig["stripeApi"];
  bootstrap: boolean;
  dashboard: false | { path: string };
  clock: Clock;
  log: Logger;
  accessLog: boolean;
  drainTimeoutMs: number;
  /** Off, or where `GET /metrics` is served and what it asks for. */
  metrics: false | { token: string | undefined; listen: { port: number; host: string } | undefined };
}

/**
 * THE table of options: every option reachable from a config file, a `TENANTD_*` variable
 * and (for the common ones) a `tenantd serve` flag. Adding an option is one row here plus
 * its use in `resolveConfig`; docs/configuration.md is checked against this table.
 */
export const OPTIONS: OptionRow[] = [
  { path: "dataDir", kind: "string", env: "TENANTD_DATA_DIR", flag: "data-dir", default: "./.tenantd", doc: "Folder holding the SQLite database, file blobs (fs driver) and the generated server key. Created (mode 0700) if missing." },
  { path: "databasePath", kind: "string", env: "TENANTD_DATABASE_PATH", default: "<dataDir>/tenantd.db", doc: 'The SQLite file; relative paths resolve against `dataDir`. `":memory:"` for throwaway use.' },
  { path: "database.url", kind: "postgres-url", env: "TENANTD_DATABASE_URL", secret: true, default: "none (SQLite)", doc: "PostgreSQL instead of SQLite: `postgres://user:password@host:5432/db` (scaling.md). Carries the password, so no flag: argv is visible to every user of the machine; use the environment or a config file." },
  { path: "database.pool.max", kind: "count", env: "TENANTD_DATABASE_POOL_MAX", default: "10", doc: "PostgreSQL connections per tenantd process (only with `database.url`). Keep processes × this under the server's `max_connections` (scaling.md)." },
  { path: "secretKey", kind: "string", env: "TENANTD_SECRET_KEY", secret: true, default: "generated into <dataDir>/secret.key", doc: "32 bytes as 64 hex characters or base64. Encrypts stored secrets and signs access tokens. No flag: keep it out of argv." },
  { path: "publicUrl", kind: "url", env: "TENANTD_PUBLIC_URL", flag: "public-url", default: "the address served (serve), http://localhost:3000 (library)", doc: "Base URL clients reach the server at, used in every link it hands out. Include a mount prefix." },
  { path: "mode", kind: ["development", "production"], env: "TENANTD_MODE", flag: "mode", default: "production if NODE_ENV=production, else development", doc: "Production: no development outbox or billing unless chosen, no token-bearing links in logs, mail transport required. `serve --production` is short for `--mode production`." },
  { path: "port", kind: "port", env: "PORT", flag: "port", default: "3000", doc: "`serve` only: port to listen on; 0 picks a free one. The port asked for or nothing." },
  { path: "host", kind: "string", env: "HOST", flag: "host", default: "localhost", doc: "`serve` only: interface to listen on (`0.0.0.0` for every interface, as in a container)." },
  { path: "maxJsonBytes", kind: "count", env: "TENANTD_MAX_JSON_BYTES", default: "1048576", doc: "Largest JSON request body (bytes), counted while streaming: larger is 413." },
  { path: "argon2.memoryCost", kind: "count", env: "TENANTD_ARGON2_MEMORY_COST", default: "19456", doc: "argon2id memory in KiB (OWASP). Lower only in tests." },
  { path: "argon2.timeCost", kind: "count", env: "TENANTD_ARGON2_TIME_COST", default: "2", doc: "argon2id iterations." },
  { path: "argon2.parallelism", kind: "count", env: "TENANTD_ARGON2_PARALLELISM", default: "1", doc: "argon2id lanes." },
  { path: "trustProxy", kind: "proxy", env: "TENANTD_TRUST_PROXY", flag: "trust-proxy", default: "false", doc: "The proxies in front of tenantd whose `x-forwarded-for` is believed: `true` (one proxy), a hop count (0-10), or their addresses/CIDRs (`loopback`, `private`, `linklocal` name the usual ranges). The client IP (rate limits) is the rightmost address that is not a trusted proxy; IPv6 counts by /64. See security.md and deployment.md." },
  { path: "refreshReuseGraceSeconds", kind: "seconds", env: "TENANTD_REFRESH_REUSE_GRACE_SECONDS", default: "5", doc: "Seconds during which presenting a just-rotated refresh token again returns the same successor (tabs refreshing at once) instead of ending the session. See auth.md.", check: { test: (n) => Number.isInteger(n) && (n as number) <= 60, expects: "a whole number of seconds from 0 to 60" } },
  { path: "bodyIdleTimeoutSeconds", kind: "seconds", env: "TENANTD_BODY_IDLE_TIMEOUT_SECONDS", default: "30", doc: "A request body (JSON or upload) that sends nothing for this long is refused with 408 `request_timeout`.", check: { test: (n) => typeof n === "number" && n >= 0.1 && n <= 3600, expects: "a number of seconds from 0.1 to 3600" } },
  { path: "rateLimit", kind: "switch", env: "TENANTD_RATE_LIMIT", default: "on", doc: "`false` turns the auth endpoints' rate limits off." },
  { path: "rateLimit.windowSeconds", kind: "count", env: "TENANTD_RATE_LIMIT_WINDOW_SECONDS", default: "60", doc: "Rate-limit window length." },
  { path: "rateLimit.perIp", kind: "count", env: "TENANTD_RATE_LIMIT_PER_IP", default: "30", doc: "Requests per window per client IP, per endpoint." },
  { path: "rateLimit.perEmail", kind: "count", env: "TENANTD_RATE_LIMIT_PER_EMAIL", default: "10", doc: "Requests per window per email address, per endpoint." },
  { path: "email.transport", kind: ["outbox", "smtp"], env: "TENANTD_EMAIL_TRANSPORT", default: "smtp when a host is set, else outbox (development only)", doc: "`outbox` stores messages for `tenantd mail list` (and logs their links in development); `smtp` sends them." },
  { path: "email.from", kind: "string", env: "TENANTD_EMAIL_FROM", default: "tenantd <no-reply@localhost>", doc: "Default sender; an app's own setting wins." },
  { path: "email.smtp.host", kind: "string", env: "TENANTD_SMTP_HOST", default: "none", doc: "SMTP server; setting it chooses SMTP." },
  { path: "email.smtp.port", kind: "port", env: "TENANTD_SMTP_PORT", default: "587", doc: "SMTP port." },
  { path: "email.smtp.secure", kind: "boolean", env: "TENANTD_SMTP_SECURE", default: "true on port 465", doc: "TLS from the first byte (port 465); otherwise STARTTLS when offered." },
  { path: "email.smtp.user", kind: "string", env: "TENANTD_SMTP_USER", default: "none", doc: "SMTP user." },
  { path: "email.smtp.pass", kind: "string", env: "TENANTD_SMTP_PASS", secret: true, default: "none", doc: "SMTP password." },
  { path: "email.smtp.ignoreTLS", kind: "boolean", env: "TENANTD_SMTP_IGNORE_TLS", default: "false", doc: "Never upgrade to TLS (a local relay only)." },
  { path: "webhooks.allowInsecure", kind: "boolean", env: "TENANTD_WEBHOOKS_ALLOW_INSECURE", default: "false", doc: "Allow `http://` and loopback/private webhook targets. Development and tests only." },
  { path: "webhooks.timeoutMs", kind: "count", env: "TENANTD_WEBHOOKS_TIMEOUT_MS", default: "1500", doc: "How long a webhook receiver has to answer." },
  { path: "realtime.retentionSeconds", kind: "seconds", env: "TENANTD_REALTIME_RETENTION_SECONDS", default: "300", doc: "How long a realtime stream that reconnects with `Last-Event-ID` is sent every event it missed; older positions get a `reset` event (realtime.md).", check: { test: (n) => Number.isInteger(n) && (n as number) >= 10 && (n as number) <= 86_400, expects: "a whole number of seconds from 10 to 86400" } },
  { path: "realtime.keepAliveSeconds", kind: "seconds", env: "TENANTD_REALTIME_KEEP_ALIVE_SECONDS", default: "15", doc: "An idle realtime stream gets a keep-alive comment (and its resume position) this often, so proxies keep it open.", check: { test: (n) => typeof n === "number" && n >= 1 && n <= 300, expects: "a number of seconds from 1 to 300" } },
  { path: "realtime.maxConnectionsPerTenant", kind: "count", env: "TENANTD_REALTIME_MAX_CONNECTIONS_PER_TENANT", default: "10", doc: "Open realtime streams per tenant, per node, and the dashboard's live views per developer; one more is 429 `rate_limited`." },
  { path: "realtime.maxConnectionsPerIp", kind: "count", env: "TENANTD_REALTIME_MAX_CONNECTIONS_PER_IP", default: "100", doc: "Open realtime streams per client IP (trustProxy decides the IP), per node; one more is 429 `rate_limited`." },
  { path: "realtime.maxSubscriptionsPerConnection", kind: "count", env: "TENANTD_REALTIME_MAX_SUBSCRIPTIONS", default: "100", doc: "Subscriptions on one realtime stream; one more is 409 `conflict`." },
  { path: "realtime.maxFilterBytes", kind: "count", env: "TENANTD_REALTIME_MAX_FILTER_BYTES", default: "4096", doc: "Characters of one subscription's filter as JSON (at most 4096, the list filter's limit); longer is 400 `invalid_filter`.", check: { test: (n) => Number.isInteger(n) && (n as number) >= 2 && (n as number) <= 4096, expects: "a whole number from 2 to 4096" } },
  { path: "realtime.maxBufferedBytes", kind: "count", env: "TENANTD_REALTIME_MAX_BUFFERED_BYTES", default: "1048576", doc: "Bytes of events a realtime stream may hold for a client that reads too slowly; past it the stream ends with a `dropped` event and the client resumes." },
  { path: "files.maxBytes", kind: "count", env: "TENANTD_FILES_MAX_BYTES", default: "10485760", doc: "Largest upload (10 MiB); larger is 413 while streaming." },
  { path: "files.publicBaseUrl", kind: "url", env: "TENANTD_FILES_PUBLIC_BASE_URL", default: "none", doc: "Base URL that serves the stored blobs directly (a CDN or public bucket): file URLs become `<publicBaseUrl>/<pathname>`. Not with `files.cdnBaseUrl`. What the CDN must add: files.md.", check: { test: (s) => typeof s === "string" && /^https?:\/\/[^?#\s]+$/.test(s), expects: "an http(s) URL without query or fragment" } },
  { path: "storage.driver", kind: ["fs", "s3"], env: "TENANTD_STORAGE", default: "fs (s3 when storage.bucket is set)", doc: "Where file blobs go: `fs` under `<dataDir>/files`, or `s3` (AWS S3, R2, MinIO, any S3-compatible store). See files.md." },
  { path: "storage.bucket", kind: "string", env: "TENANTD_S3_BUCKET", default: "none", doc: "S3 bucket for file blobs; must exist (checked at startup).", check: { test: (s) => typeof s === "string" && BUCKET_NAME.test(s), expects: "an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens)" } },
  { path: "storage.region", kind: "string", env: "TENANTD_S3_REGION", default: "us-east-1", doc: "S3 region the requests are signed for (`auto` for Cloudflare R2)." },
  { path: "storage.endpoint", kind: "url", env: "TENANTD_S3_ENDPOINT", default: "https://s3.<region>.amazonaws.com", doc: "S3 endpoint, path-style (`https://<account>.r2.cloudflarestorage.com`, `http://minio:9000`)." },
  { path: "storage.accessKeyId", kind: "string", env: "TENANTD_S3_ACCESS_KEY_ID", default: "none", doc: "S3 access key id; needs to list, read, write and delete objects in the bucket." },
  { path: "storage.secretAccessKey", kind: "string", env: "TENANTD_S3_SECRET_ACCESS_KEY", secret: true, default: "none", doc: "S3 secret access key. No flag: keep it out of argv; use the environment or a config file." },
  { path: "files.cdnBaseUrl", kind: "url", env: "TENANTD_FILES_CDN_BASE_URL", default: "none", doc: "Origin of a CDN in front of this server for public file URLs (no query or fragment).", check: { test: (s) => typeof s === "string" && /^https?:\/\/[^?#\s]+$/.test(s), expects: "an http(s) URL without query or fragment" } },
  { path: "devBilling", kind: "boolean", env: "TENANTD_DEV_BILLING", default: "on in development, off in production", doc: "Development billing provider (free local checkout pages) for apps without Stripe keys." },
  { path: "dashboard", kind: "switch", env: "TENANTD_DASHBOARD", default: "on", doc: "`false` turns the developer dashboard (dashboard.md) off." },
  { path: "dashboard.path", kind: "string", env: "TENANTD_DASHBOARD_PATH", default: "/_", doc: "Where the dashboard is served, e.g. `/admin/dashboard`.", check: { test: (s) => typeof s === "string" && /^(\/[A-Za-z0-9_~.-]+)+\/?$/.test(s), expects: 'a path like "/_" or "/admin/dashboard"' } },
  { path: "bootstrap", kind: "boolean", env: "TENANTD_BOOTSTRAP", default: "true", doc: "On an empty database, create an app named `default` and print its keys. Its browser origins are http://localhost:3000 and :5173 in development mode, none in production." },
  { path: "logger", kind: [...LOG_LEVELS], env: "TENANTD_LOG_LEVEL", flag: "log-level", default: "info", doc: "Level of the built-in logger. In code, a `{ debug?, info, warn, error }` object instead (redaction still applies)." },
  { path: "logFormat", kind: ["pretty", "json"], env: "TENANTD_LOG_FORMAT", flag: "log-format", default: "pretty", doc: "`json`: one JSON object per line (time, level, msg, fields) for log collectors." },
  { path: "accessLog", kind: "boolean", env: "TENANTD_ACCESS_LOG", flag: "access-log", default: "true", doc: "One info line per request: method, route pattern, status, ms, app id, request id." },
  { path: "metrics", kind: "switch", env: "TENANTD_METRICS", default: "off (on when metrics.token or metrics.port is set)", doc: "Prometheus metrics at `GET /metrics`: requests by route pattern and status, latency, event-loop lag, database, webhook and email queues. Needs `metrics.token` or `metrics.port`. See deployment.md." },
  { path: "metrics.token", kind: "string", env: "TENANTD_METRICS_TOKEN", secret: true, default: "none", doc: "Bearer token the scraper sends (`authorization: Bearer …`; a long random value, e.g. `openssl rand -hex 32`); `/metrics` is then served on the main port. No flag: keep it out of argv." },
  { path: "metrics.port", kind: "port", env: "TENANTD_METRICS_PORT", flag: "metrics-port", default: "none", doc: "Serve `/metrics` on a listener of its own on this port (0 picks a free one), not on the main port." },
  { path: "metrics.host", kind: "string", env: "TENANTD_METRICS_HOST", flag: "metrics-host", default: "127.0.0.1", doc: "Interface of the metrics listener (`0.0.0.0` when the scraper runs in another container or machine)." },
  { path: "drainTimeoutMs", kind: "count", env: "TENANTD_DRAIN_TIMEOUT_MS", flag: "drain-timeout-ms", default: "10000", doc: "On SIGTERM/SIGINT or `close()`: how long requests in flight may take before the server stops anyway." },
];

/** Options only code can give (objects and functions): checked here, named in plain words. */
export const CODE_ONLY: Record<string, { schema: v.GenericSchema; expects: string }> = {
  storage: { schema: v.custom<Driver>((d) => typeof d === "object" && d !== null && "getItem" in d), expects: "must be an unstorage driver (an object with getItem, setItem, …)" },
  clock: { schema: v.custom<Clock>((f) => typeof f === "function"), expects: "must be a function returning ms since the epoch" },
  stripeApi: {
    schema: v.strictObject({ host: v.string(), port: v.pipe(v.number(), v.integer(), v.minValue(1)), protocol: v.picklist(["http", "https"]) }),
    expects: 'must be { host, port, protocol: "http" | "https" }',
  },
  hooks: { schema: v.custom<ServerHooks | string>((h) => typeof h === "string" || (typeof h === "object" && h !== null && !Array.isArray(h))), expects: "must be the path of a hooks module, or the object defineHooks({ … }) returns" },
  logger: { schema: v.custom<Logger>((l) => typeof l === "object" && l !== null && ["info", "warn", "error"].every((m) => typeof (l as Record<string, unknown>)[m] === "function")), expects: `must be one of ${LOG_LEVELS.join(", ")}, or an object with info, warn and error methods` },
};

/** Thrown at startup for a bad option; the message names the option and where its value came from. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

function parseServerKey(raw: string, origin: string): Buffer {
  const trimmed = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) throw new ConfigError(`tenantd config: secretKey (${origin}) must be 32 bytes as 64 hex characters or base64 (got ${key.length} bytes)`);
  return key;
}

function loadOrCreateServerKey(dataDir: string): Buffer {
  const file = join(dataDir, "secret.key");
  if (existsSync(file)) return parseServerKey(readFileSync(file, "utf8"), file);
  const key = randomBytes(32);
  writeFileSync(file, key.toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

/** The layers a library caller has: its config object over the environment. */
export function libraryLayers(input: TenantBackendConfig, env: NodeJS.ProcessEnv): Layer[] {
  return [
    { kind: "option", label: "createTenantBackend option", values: input as Record<string, unknown> },
    { kind: "env", env },
  ];
}

export function resolveConfig(input: TenantBackendConfig = {}, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  return resolveLayers(libraryLayers(input, env), env);
}

/** Validates and merges option layers (highest first) and builds the resolved configuration. */
export function resolveLayers(layers: Layer[], env: NodeJS.ProcessEnv): ResolvedConfig {
  const { get, sourceOf, code } = collectOptions(OPTIONS, CODE_ONLY, layers, (m) => new ConfigError(`tenantd config: ${m}`));
  const num = (path: string, dflt: number) => (get(path) as number | undefined) ?? dflt;
  const bool = (path: string) => get(path) as boolean | undefined;

  const mode = (get("mode") as ResolvedConfig["mode"] | undefined) ?? (env.NODE_ENV === "production" ? "production" : "development");
  const dataDir = resolve((get("dataDir") as string | undefined) ?? ".tenantd");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = get("secretKey") as string | undefined;
  const serverKey = secret !== undefined ? parseServerKey(secret, describeSource(sourceOf("secretKey"))) : loadOrCreateServerKey(dataDir);
  const databasePath = get("databasePath") as string | undefined;
  const databaseUrl = get("database.url") as string | undefined;

  const smtpHost = get("email.smtp.host") as string | undefined;
  const transport = (get("email.transport") as "outbox" | "smtp" | undefined) ?? (smtpHost ? "smtp" : "outbox");
  if (transport === "smtp" && !smtpHost) {
    throw new ConfigError(`tenantd config: email.transport is "smtp" (${describeSource(sourceOf("email.transport"))}) but no SMTP server is set: set email.smtp.host (env TENANTD_SMTP_HOST).`);
  }
  const smtpPort = num("email.smtp.port", 587);
  const email: ResolvedConfig["email"] = {
    transport,
    from: (get("email.from") as string | undefined) ?? "tenantd <no-reply@localhost>",
    smtp: smtpHost
      ? {
          host: smtpHost,
          port: smtpPort,
          secure: bool("email.smtp.secure") ?? smtpPort === 465,
          user: get("email.smtp.user") as string | undefined,
          pass: get("email.smtp.pass") as string | undefined,
          ...(bool("email.smtp.ignoreTLS") !== undefined && { ignoreTLS: bool("email.smtp.ignoreTLS") }),
        }
      : undefined,
  };

  const logger = code.logger as Logger | undefined;
  const level = (get("logger") as LogLevel | undefined) ?? "info";
  const format = (get("logFormat") as LogFormat | undefined) ?? "pretty";
  const cdn = get("files.cdnBaseUrl") as string | undefined;
  const publicBase = get("files.publicBaseUrl") as string | undefined;
  if (cdn !== undefined && publicBase !== undefined) throw new ConfigError("tenantd config: set files.cdnBaseUrl (a CDN in front of tenantd) or files.publicBaseUrl (a CDN on the blobs themselves), not both. See docs/files.md.");
  return {
    mode,
    dataDir,
    databasePath: databasePath === ":memory:" ? ":memory:" : resolve(dataDir, databasePath ?? "tenantd.db"),
    database: databaseUrl ? { url: databaseUrl, pool: { max: num("database.pool.max", 10) } } : undefined,
    storage: code.storage as Driver | undefined,
    storageChoice: resolveStorageChoice(get, (p) => describeSource(sourceOf(p)), (m) => new ConfigError(`tenantd config: ${m}`)),
    serverKey,
    publicUrl: ((get("publicUrl") as string | undefined) ?? "http://localhost:3000").replace(/\/+$/, ""),
    maxJsonBytes: num("maxJsonBytes", 1024 * 1024),
    argon2: {
      memoryCost: num("argon2.memoryCost", OWASP_ARGON2.memoryCost),
      timeCost: num("argon2.timeCost", OWASP_ARGON2.timeCost),
      parallelism: num("argon2.parallelism", OWASP_ARGON2.parallelism),
    },
    trustProxy: toTrustProxy((get("trustProxy") as TrustProxyOption | undefined) ?? false),
    refreshReuseGraceSeconds: num("refreshReuseGraceSeconds", 5),
    bodyIdleTimeoutSeconds: num("bodyIdleTimeoutSeconds", 30),
    rateLimit: get("rateLimit") === false ? false : { windowSeconds: num("rateLimit.windowSeconds", 60), perIp: num("rateLimit.perIp", 30), perEmail: num("rateLimit.perEmail", 10) },
    email,
    emailChosen: get("email.transport") !== undefined || smtpHost !== undefined,
    webhooks: { allowInsecure: bool("webhooks.allowInsecure") ?? false, timeoutMs: num("webhooks.timeoutMs", 1500) },
    realtime: {
      retentionSeconds: num("realtime.retentionSeconds", 300),
      keepAliveSeconds: num("realtime.keepAliveSeconds", 15),
      maxConnectionsPerTenant: num("realtime.maxConnectionsPerTenant", 10),
      maxConnectionsPerIp: num("realtime.maxConnectionsPerIp", 100),
      maxSubscriptionsPerConnection: num("realtime.maxSubscriptionsPerConnection", 100),
      maxFilterBytes: num("realtime.maxFilterBytes", 4096),
      maxBufferedBytes: num("realtime.maxBufferedBytes", 1024 * 1024),
    },
    files: { maxBytes: num("files.maxBytes", 10 * 1024 * 1024), cdnBaseUrl: cdn?.replace(/\/+$/, "") ?? null, publicBaseUrl: publicBase?.replace(/\/+$/, "") ?? null },
    devBilling: bool("devBilling") ?? mode !== "production",
    stripeApi: code.stripeApi as ResolvedConfig["stripeApi"],
    bootstrap: bool("bootstrap") ?? true,
    dashboard: get("dashboard") === false ? false : { path: ((get("dashboard.path") as string | undefined) ?? "/_").replace(/\/+$/, "") },
    clock: (code.clock as Clock | undefined) ?? systemClock,
    log: logger ? safeLogger(logger) : createConsoleLogger(level, format),
    accessLog: bool("accessLog") ?? true,
    drainTimeoutMs: num("drainTimeoutMs", 10_000),
    metrics: resolveMetrics(get, (p) => describeSource(sourceOf(p))),
  };
}

/** On when asked for, or when a token or port is given; never on the main port without a token. */
function resolveMetrics(get: (path: string) => unknown, from: (path: string) => string): ResolvedConfig["metrics"] {
  const token = get("metrics.token") as string | undefined;
  const port = get("metrics.port") as number | undefined;
  const on = get("metrics") as boolean | undefined;
  if (on === false || (on === undefined && token === undefined && port === undefined)) return false;
  if (token === undefined && port === undefined) {
    throw new ConfigError(
      `tenantd config: metrics are on (${from("metrics")}) but would be public on the main port: set metrics.token (env TENANTD_METRICS_TOKEN) for a bearer token, or metrics.port (env TENANTD_METRICS_PORT) for a listener of their own. See docs/deployment.md.`,
    );
  }
  return { token, listen: port === undefined ? undefined : { port, host: (get("metrics.host") as string | undefined) ?? "127.0.0.1" } };
}
