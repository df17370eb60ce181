import { createHash, hkdfSync } from "node:crypto";
import type { PgSql } from "./connection.ts";
import type { MetaRepository, StatsRepository } from "../repositories.ts";
import { ConfigError } from "../../config.ts";

/** The server_meta row holding the fingerprint of the server key every node on the database shares. */
export const KEY_FINGERPRINT = "server_key_fingerprint";

/** A hash of a value derived from the server key: names the key without revealing it or anything it derives. */
export function serverKeyFingerprint(serverKey: Buffer): string {
  const derived = Buffer.from(hkdfSync("sha256", serverKey, Buffer.alloc(0), "tenantd:key-fingerprint", 32));
  return createHash("sha256").update(derived).digest("hex").slice(0, 32);
}

/**
 * Every node of one cluster must have the same server key: another key signs tokens the
 * other nodes answer 401 and cannot open the secrets they sealed. The first node to start
 * on the database stores its key's fingerprint (nodes starting together agree on one row);
 * a node whose key has another refuses to start, saying how to supply the cluster's key.
 */
export async function claimServerKey(sql: PgSql, serverKey: Buffer): Promise<void> {
  const mine = serverKeyFingerprint(serverKey);
  await sql`INSERT INTO server_meta (key, value) VALUES (${KEY_FINGERPRINT}, ${mine}) ON CONFLICT (key) DO NOTHING`;
  const [row] = await sql<{ value: string }[]>`SELECT value FROM server_meta WHERE key = ${KEY_FINGERPRINT}`;
  if (row?.value === mine) return;
  throw new ConfigError(
    `tenantd config: this node's server key is not the one the other nodes on this database use (key fingerprint ${mine.slice(0, 12)}, the database's ${row?.value.slice(0, 12) ?? "none"}). ` +
      "Every node of a cluster needs the same key: set TENANTD_SECRET_KEY (or secretKey in the config file) to the cluster's key, the value the running nodes have in TENANTD_SECRET_KEY or their <dataDir>/secret.key. " +
      `Replacing the cluster's key on purpose signs everyone out and leaves stored secrets unreadable; to do it, stop every node and run DELETE FROM server_meta WHERE key = '${KEY_FINGERPRINT}' first.`,
  );
}

export function createPgMetaRepo(sql: PgSql): MetaRepository {
  return {
    async ping() {
      await sql`SELECT 1`;
    },
    async get(key) {
      const [r] = await sql<{ value: string }[]>`SELECT value FROM server_meta WHERE key = ${key}`;
      return r?.value;
    },
    async set(key, value) {
      await sql`INSERT INTO server_meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    },
  };
}

export function createPgStatsRepo(sql: PgSql): StatsRepository {
  return {
    async appUsage(appId, monthStart) {
      const [r] = await sql<{ tenants: number; records: number; fileBytes: number; deliveries: number }[]>`
        SELECT (SELECT COUNT(*) FROM tenants WHERE app_id = ${appId} AND email <> id) AS tenants,
               (SELECT COUNT(*) FROM records WHERE app_id = ${appId}) AS records,
               (SELECT COALESCE(SUM(size_bytes), 0)::bigint FROM files WHERE app_id = ${appId}) AS file_bytes,
               (SELECT COUNT(*) FROM webhook_deliveries WHERE app_id = ${appId} AND created_at >= ${monthStart}) AS deliveries`;
      return { appId, tenants: r!.tenants, records: r!.records, fileBytes: r!.fileBytes, webhookDeliveriesThisMonth: r!.deliveries };
    },
  };
}
