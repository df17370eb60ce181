import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import * as v from "valibot";
import type { Driver } from "unstorage";
import { systemClock, type Clock } from "./clock.ts";
import { createConsoleLogger, type Logger } from "./log.ts";
import { OWASP_ARGON2, type Argon2Params } from "./crypto/password.ts";
import { TrustProxySchema, toTrustProxy, type TrustProxy, type TrustProxyOption } from "./http/trust-proxy.ts";

/** Options of `createTenantBackend(config)`. Every field is optional. */
export interface TenantBackendConfig {
  /** Folder for the SQLite database, blobs and the generated server key. Env `TENANTD_DATA_DIR`; default `./.tenantd`. */
  dataDir?: string;
  /** SQLite file. Default `<dataDir>/tenantd.db`. */
  databasePath?: string;
  /** Any unstorage driver for file blobs (S3, …). Default: the fs driver at `<dataDir>/files`. */
  storage?: Driver;
  /** 32-byte server key (hex or base64) that encrypts stored secrets and signs access tokens. Env `TENANTD_SECRET_KEY`; default: generated once into `<dataDir>/secret.key`. */
  secretKey?: string;
  /** Public base URL of this server, used in links it hands out (file URLs, checkout pages, OAuth callbacks, email links). Env `TENANTD_PUBLIC_URL`; default `http://localhost:3000`. */
  publicUrl?: string;
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
  /** How tenant emails (verification, reset) leave the server. Default: the development outbox. */
  email?: EmailConfig;
  /** Outgoing webhooks. */
  webhooks?: Partial<WebhookConfig>;
  /** File uploads and their public URLs. */
  files?: { maxBytes?: number; cdnBaseUrl?: string };
  /**
   * Serve the development billing provider (local checkout pages that take no payment) for
   * apps without Stripe keys. Env `TENANTD_DEV_BILLING`; default on, off when NODE_ENV=production.
   */
  devBilling?: boolean;
  /** Override where the Stripe client connects (tests point it at a local fake). */
  stripeApi?: { host: string; port: number; protocol: "http" | "https" };
  /** On an empty database, create a default app and print its credentials. Default true. */
  bootstrap?: boolean;
  /** Injected clock (ms since epoch); tests use it to expire tokens without sleeping. */
  clock?: Clock;
  /** A logger, or the level for the built-in stderr logger. Default "info". */
  logger?: Logger | "silent" | "error" | "info";
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

export interface FilesConfig {
  /** Largest file in bytes. Default 10 MB, meaning 10 MiB (10 * 1024 * 1024 = 10,485,760 bytes). */
  maxBytes: number;
  /**
   * Origin of a CDN (or any caching proxy) in front of this server: file URLs become
   * `<cdnBaseUrl>/api/v1/public/files/<id>/<name>` instead of starting with `publicUrl`. Default none.
   */
  cdnBaseUrl: string | null;
}

export interface ResolvedConfig {
  dataDir: string;
  databasePath: string;
  storage: Driver | undefined;
  serverKey: Buffer;
  publicUrl: string;
  maxJsonBytes: number;
  argon2: Argon2Params;
  trustProxy: TrustProxy;
  refreshReuseGraceSeconds: number;
  bodyIdleTimeoutSeconds: number;
  rateLimit: RateLimitConfig | false;
  email: Required<Pick<EmailConfig, "transport" | "from">> & Pick<EmailConfig, "smtp">;
  webhooks: WebhookConfig;
  files: FilesConfig;
  devBilling: boolean;
  stripeApi: TenantBackendConfig["stripeApi"];
  bootstrap: boolean;
  clock: Clock;
  log: Logger;
}

const positiveInt = v.pipe(v.number(), v.integer(), v.minValue(1));
const urlString = v.pipe(v.string(), v.url());

const ConfigSchema = v.strictObject({
  dataDir: v.optional(v.pipe(v.string(), v.minLength(1))),
  databasePath: v.optional(v.pipe(v.string(), v.minLength(1))),
  storage: v.optional(v.custom<Driver>((d) => typeof d === "object" && d !== null && "getItem" in d, "must be an unstorage driver")),
  secretKey: v.optional(v.string()),
  publicUrl: v.optional(urlString),
  maxJsonBytes: v.optional(positiveInt),
  argon2: v.optional(v.strictObject({ memoryCost: v.optional(positiveInt), timeCost: v.optional(positiveInt), parallelism: v.optional(positiveInt) })),
  trustProxy: v.optional(TrustProxySchema),
  refreshReuseGraceSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(60))),
  bodyIdleTimeoutSeconds: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(3600))),
  rateLimit: v.optional(v.union([v.literal(false), v.strictObject({ windowSeconds: v.optional(positiveInt), perIp: v.optional(positiveInt), perEmail: v.optional(positiveInt) })])),
  email: v.optional(v.strictObject({
    transport: v.optional(v.picklist(["outbox", "smtp"])),
    smtp: v.optional(v.strictObject({ host: v.string(), port: positiveInt, secure: v.optional(v.boolean()), user: v.optional(v.string()), pass: v.optional(v.string()), ignoreTLS: v.optional(v.boolean()) })),
    from: v.optional(v.string()),
  })),
  webhooks: v.optional(v.strictObject({ allowInsecure: v.optional(v.boolean()), timeoutMs: v.optional(positiveInt) })),
  files: v.optional(v.strictObject({
    maxBytes: v.optional(positiveInt),
    cdnBaseUrl: v.optional(v.pipe(urlString, v.check((s) => /^https?:\/\/[^?#]+$/.test(s), "must be an http(s) URL without query or fragment"))),
  })),
  devBilling: v.optional(v.boolean()),
  stripeApi: v.optional(v.strictObject({ host: v.string(), port: positiveInt, protocol: v.picklist(["http", "https"]) })),
  bootstrap: v.optional(v.boolean()),
  clock: v.optional(v.custom<Clock>((f) => typeof f === "function", "must be a function returning ms since epoch")),
  logger: v.optional(v.union([v.picklist(["silent", "error", "info"]), v.custom<Logger>((l) => typeof l === "object" && l !== null && "error" in l, "must be a logger or a level")])),
});

/** Thrown at startup for a bad option; the message names the option. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

function parseServerKey(raw: string, origin: string): Buffer {
  const trimmed = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) throw new ConfigError(`tenantd config: ${origin} must be 32 bytes as 64 hex characters or base64 (got ${key.length} bytes)`);
  return key;
}

function loadOrCreateServerKey(dataDir: string): Buffer {
  const file = join(dataDir, "secret.key");
  if (existsSync(file)) return parseServerKey(readFileSync(file, "utf8"), file);
  const key = randomBytes(32);
  writeFileSync(file, key.toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  return key;
}

/** The `email` option, or else SMTP from the environment (how `tenantd serve` sends real mail). */
function resolveEmail(option: EmailConfig | undefined, env: NodeJS.ProcessEnv): ResolvedConfig["email"] {
  const from = option?.from ?? env.TENANTD_EMAIL_FROM ?? "tenantd <no-reply@localhost>";
  if (option) return { transport: option.transport ?? "outbox", from, smtp: option.smtp };
  if (!env.TENANTD_SMTP_HOST) return { transport: "outbox", from };
  const port = Number(env.TENANTD_SMTP_PORT ?? 587);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError(`tenantd config: TENANTD_SMTP_PORT must be a port number (got ${env.TENANTD_SMTP_PORT})`);
  return {
    transport: "smtp",
    from,
    smtp: {
      host: env.TENANTD_SMTP_HOST,
      port,
      secure: /^(1|true)$/i.test(env.TENANTD_SMTP_SECURE ?? (port === 465 ? "true" : "false")),
      user: env.TENANTD_SMTP_USER,
      pass: env.TENANTD_SMTP_PASS,
    },
  };
}

export function resolveConfig(input: TenantBackendConfig = {}, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const parsed = v.safeParse(ConfigSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = v.getDotPath(issue) ?? issue.path?.map((p) => String(p.key)).join(".") ?? "(root)";
    throw new ConfigError(`tenantd config: option "${path}" ${issue.message}`);
  }
  const c = parsed.output;
  const dataDir = resolve(c.dataDir ?? env.TENANTD_DATA_DIR ?? ".tenantd");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = c.secretKey ?? env.TENANTD_SECRET_KEY;
  const serverKey = secret !== undefined
    ? parseServerKey(secret, c.secretKey !== undefined ? 'option "secretKey"' : "TENANTD_SECRET_KEY")
    : loadOrCreateServerKey(dataDir);
  const publicUrl = (c.publicUrl ?? env.TENANTD_PUBLIC_URL ?? "http://localhost:3000").replace(/\/+$/, "");
  if (!/^https?:\/\//.test(publicUrl)) throw new ConfigError(`tenantd config: option "publicUrl" must be an http(s) URL (got ${publicUrl})`);
  if (c.email?.transport === "smtp" && !c.email.smtp) throw new ConfigError('tenantd config: option "email.smtp" is required when email.transport is "smtp"');
  const log = typeof c.logger === "object" ? c.logger : createConsoleLogger(c.logger ?? "info");
  return {
    dataDir,
    databasePath: c.databasePath === ":memory:" ? ":memory:" : resolve(dataDir, c.databasePath ?? "tenantd.db"),
    storage: c.storage,
    serverKey,
    publicUrl,
    maxJsonBytes: c.maxJsonBytes ?? 1024 * 1024,
    argon2: { ...OWASP_ARGON2, ...c.argon2 },
    trustProxy: toTrustProxy(c.trustProxy ?? false),
    refreshReuseGraceSeconds: c.refreshReuseGraceSeconds ?? 5,
    bodyIdleTimeoutSeconds: c.bodyIdleTimeoutSeconds ?? 30,
    rateLimit: c.rateLimit === false ? false : { windowSeconds: 60, perIp: 30, perEmail: 10, ...c.rateLimit },
    email: resolveEmail(c.email, env),
    webhooks: { allowInsecure: c.webhooks?.allowInsecure ?? /^(1|true)$/i.test(env.TENANTD_WEBHOOKS_ALLOW_INSECURE ?? ""), timeoutMs: c.webhooks?.timeoutMs ?? 1500 },
    files: { maxBytes: c.files?.maxBytes ?? 10 * 1024 * 1024, cdnBaseUrl: c.files?.cdnBaseUrl?.replace(/\/+$/, "") ?? null },
    devBilling: c.devBilling ?? (env.TENANTD_DEV_BILLING !== undefined ? /^(1|true)$/i.test(env.TENANTD_DEV_BILLING) : env.NODE_ENV !== "production"),
    stripeApi: c.stripeApi,
    bootstrap: c.bootstrap ?? true,
    clock: c.clock ?? systemClock,
    log,
  };
}
