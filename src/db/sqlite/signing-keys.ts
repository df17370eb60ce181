import type { SqliteDb } from "./connection.ts";
import type { SigningKeysRepository } from "../repositories.ts";
import type { SigningKeyRow } from "../types.ts";

const COLUMNS = "kid, app_id AS appId, public_key AS publicKey, private_key_sealed AS privateKeySealed, created_at AS createdAt, retired_at AS retiredAt";

export function createSigningKeysRepo(db: SqliteDb): SigningKeysRepository {
  const q = {
    list: db.prepare<[string], SigningKeyRow>(`SELECT ${COLUMNS} FROM signing_keys WHERE app_id = ? ORDER BY retired_at IS NOT NULL, created_at DESC, kid DESC`),
    find: db.prepare<[string], SigningKeyRow>(`SELECT ${COLUMNS} FROM signing_keys WHERE kid = ?`),
    current: db.prepare<[string], SigningKeyRow>(`SELECT ${COLUMNS} FROM signing_keys WHERE app_id = ? AND retired_at IS NULL`),
    insert: db.prepare<[string, string, string, string, number]>(
      "INSERT OR IGNORE INTO signing_keys (kid, app_id, public_key, private_key_sealed, created_at) VALUES (?, ?, ?, ?, ?)",
    ),
    retire: db.prepare<[number, string]>("UPDATE signing_keys SET retired_at = ? WHERE app_id = ? AND retired_at IS NULL"),
    drop: db.prepare<[string, number]>("DELETE FROM signing_keys WHERE app_id = ? AND retired_at IS NOT NULL AND retired_at < ?"),
  };
  const insert = (k: SigningKeyRow) => q.insert.run(k.kid, k.appId, k.publicKey, k.privateKeySealed, k.createdAt);
  const insertFirst = db.transaction((k: SigningKeyRow) => {
    insert(k);
    return q.current.get(k.appId)!;
  });
  const rotate = db.transaction((k: SigningKeyRow, dropRetiredBefore: number) => {
    q.retire.run(k.createdAt, k.appId);
    q.drop.run(k.appId, dropRetiredBefore);
    insert(k);
  });
  return {
    async listForApp(appId) {
      return q.list.all(appId);
    },
    async findByKid(kid) {
      return q.find.get(kid);
    },
    async insertFirst(key) {
      return insertFirst.immediate(key);
    },
    async rotate(key, dropRetiredBefore) {
      rotate.immediate(key, dropRetiredBefore);
    },
  };
}
