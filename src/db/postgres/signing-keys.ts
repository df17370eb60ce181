import type { PgSql } from "./connection.ts";
import type { SigningKeysRepository } from "../repositories.ts";
import type { SigningKeyRow } from "../types.ts";

export function createPgSigningKeysRepo(sql: PgSql): SigningKeysRepository {
  return {
    async listForApp(appId) {
      return sql<SigningKeyRow[]>`SELECT kid, app_id, public_key, private_key_sealed, created_at, retired_at FROM signing_keys
        WHERE app_id = ${appId} ORDER BY retired_at IS NOT NULL, created_at DESC, kid DESC`;
    },
    async findByKid(kid) {
      const [row] = await sql<SigningKeyRow[]>`SELECT kid, app_id, public_key, private_key_sealed, created_at, retired_at FROM signing_keys WHERE kid = ${kid}`;
      return row;
    },
    async insertFirst(k) {
      // The partial unique index turns a second node's concurrent first key into no row.
      await sql`INSERT INTO signing_keys (kid, app_id, public_key, private_key_sealed, created_at)
        VALUES (${k.kid}, ${k.appId}, ${k.publicKey}, ${k.privateKeySealed}, ${k.createdAt}) ON CONFLICT DO NOTHING`;
      const [row] = await sql<SigningKeyRow[]>`SELECT kid, app_id, public_key, private_key_sealed, created_at, retired_at FROM signing_keys
        WHERE app_id = ${k.appId} AND retired_at IS NULL`;
      return row!;
    },
    async rotate(k, dropRetiredBefore) {
      await sql.begin(async (tx) => {
        // Serializes two rotations of one app: each retires the key the other made current.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`signing-keys:${k.appId}`}))`;
        await tx`UPDATE signing_keys SET retired_at = ${k.createdAt} WHERE app_id = ${k.appId} AND retired_at IS NULL`;
        await tx`DELETE FROM signing_keys WHERE app_id = ${k.appId} AND retired_at IS NOT NULL AND retired_at < ${dropRetiredBefore}`;
        await tx`INSERT INTO signing_keys (kid, app_id, public_key, private_key_sealed, created_at)
          VALUES (${k.kid}, ${k.appId}, ${k.publicKey}, ${k.privateKeySealed}, ${k.createdAt})`;
      });
    },
  };
}
