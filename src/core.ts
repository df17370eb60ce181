import type { Storage } from "unstorage";
import { resolveConfig, type ResolvedConfig, type TenantBackendConfig } from "./config.ts";
import type { SqliteDb } from "./db/sqlite/connection.ts";
import type { Repositories } from "./db/repositories.ts";
import { openStore } from "./db/store.ts";
import { createSecretBox, type SecretBox } from "./crypto/secret-box.ts";
import { createPasswordHasher, type PasswordHasher } from "./crypto/password.ts";
import { createHooks, type Hooks } from "./hooks.ts";
import type { Clock } from "./clock.ts";
import { createAccessTokens, type AccessTokens } from "./auth/access-token.ts";
import { createSigningKeys, type SigningKeys } from "./auth/signing-keys.ts";
import type { Logger } from "./log.ts";
import { installAreas } from "./area-install.ts";
import { openStorage, withStorageCheck } from "./files/storage.ts";
import type { MetricsSink } from "./metrics/sink.ts";
import type { ServerHooks } from "./server-hooks/types.ts";
import type { PgChanges } from "./db/postgres/changes.ts";
import type { RealtimeHub } from "./realtime/hub.ts";

/**
 * Everything the areas share, without HTTP: the CLI and tests call area functions with it
 * directly, and `createTenantBackend` puts routes in front of it.
 */
export interface Core {
  config: ResolvedConfig;
  clock: Clock;
  log: Logger;
  /** Which engine stands behind `db` (`database.url` chooses PostgreSQL). */
  engine: "sqlite" | "postgres";
  /** The SQLite handle; on PostgreSQL any use throws. */
  sqlite: SqliteDb;
  db: Repositories;
  /** Settles when the store's schema is current (PostgreSQL migrates asynchronously). */
  ready: Promise<void>;
  /** PostgreSQL's cross-node change channel; undefined on SQLite. */
  changes?: PgChanges;
  /** Realtime streams and the change feed (src/realtime), set by installAreas. */
  realtime?: RealtimeHub;
  secrets: SecretBox;
  passwords: PasswordHasher;
  accessTokens: AccessTokens;
  /** Each app's access-token signing keys (Ed25519, published as the app's JWKS). */
  signingKeys: SigningKeys;
  storage: Storage;
  hooks: Hooks;
  /** The operator's hooks (config `hooks`, docs/hooks.md), set by a server that has them. */
  serverHooks?: ServerHooks;
  /** Set by a server with metrics on (src/metrics); undefined otherwise. */
  metrics?: MetricsSink;
  /** Runs `fn` when the core closes (timers, transports). */
  onClose(fn: () => unknown): void;
  close(): Promise<void>;
}

export function createCore(input: TenantBackendConfig | ResolvedConfig = {}): Core {
  const config = "serverKey" in input ? input : resolveConfig(input);
  const store = openStore(config);
  const secrets = createSecretBox(config.serverKey);
  const closers: (() => unknown)[] = [];
  const signingKeys = createSigningKeys(store.db.signingKeys, secrets, config.clock);
  let closed = false;
  const core: Core = {
    config,
    clock: config.clock,
    log: config.log,
    engine: store.engine,
    sqlite: store.sqlite,
    db: store.db,
    ready: withStorageCheck(config, store.ready),
    changes: store.changes,
    secrets,
    accessTokens: createAccessTokens(secrets.deriveKey("access-token"), signingKeys.verifier),
    signingKeys,
    passwords: createPasswordHasher(config.argon2),
    storage: openStorage(config),
    hooks: createHooks(),
    onClose: (fn) => closers.push(fn),
    async close() {
      if (closed) return;
      closed = true;
      for (const fn of closers.reverse()) await fn();
      await core.storage.dispose();
      await store.close();
    },
  };
  installAreas(core);
  return core;
}
