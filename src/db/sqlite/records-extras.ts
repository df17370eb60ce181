import type { SqliteDb } from "./connection.ts";
import type { KeptReply, RecordScope } from "../types.ts";
import { searchDocument, type SearchLanguage } from "../../data/text.ts";

/**
 * The full-text index of records (records_fts, rowid = records.seq, migration 13): the words
 * src/data/text.ts makes of a record, written in the transaction of the write they belong to.
 */
export function createRecordSearch(db: SqliteDb) {
  const q = {
    remove: db.prepare<[number]>("DELETE FROM records_fts WHERE rowid = ?"),
    insert: db.prepare<[number, string, string, string, string, string]>("INSERT INTO records_fts (rowid, text, fields, app_id, collection, lang) VALUES (?, ?, ?, ?, ?, ?)"),
    stale: db
      .prepare<[string, string, number, string], [number, string]>(
        `SELECT r.seq, r.data FROM records r LEFT JOIN records_fts f ON f.rowid = r.seq
         WHERE r.app_id = ? AND r.collection = ? AND r.seq > ? AND (f.rowid IS NULL OR f.lang IS NOT ?) ORDER BY r.seq LIMIT 500`,
      )
      .raw(true),
    dropExcept: db.prepare<[string, string]>("DELETE FROM records_fts WHERE app_id = ? AND collection NOT IN (SELECT value FROM json_each(?))"),
  };

  /** The record's words, when its collection has search on (scope.search). */
  function index(scope: RecordScope, seq: number, data: unknown, language = scope.search): void {
    if (language === undefined) return;
    const doc = searchDocument(data, language);
    q.remove.run(seq);
    q.insert.run(seq, doc.words.join(" "), JSON.stringify(doc.fields), scope.appId, scope.collection, language);
  }

  /** Indexes a chunk of records a settings change left without words (or with another language's); the last seq, or undefined when none was left. */
  const txChunk = db.transaction((scope: RecordScope, language: SearchLanguage, after: number): number | undefined => {
    const rows = q.stale.all(scope.appId, scope.collection, after, language);
    for (const [seq, data] of rows) index(scope, seq, JSON.parse(data), language);
    return rows.at(-1)?.[0];
  });

  return {
    index,
    /**
     * Makes the app's index match `wanted`: collections no longer searched lose their words,
     * searched ones get words for every record that has none (or has another language's), a
     * chunk per transaction so writes go on meanwhile.
     */
    async sync(appId: string, wanted: { collection: string; language: SearchLanguage }[]): Promise<void> {
      q.dropExcept.run(appId, JSON.stringify(wanted.map((w) => w.collection)));
      for (const { collection, language } of wanted) {
        const scope: RecordScope = { appId, tenantId: "", collection, indexed: new Set() };
        for (let after: number | undefined = 0; after !== undefined; ) {
          after = txChunk.immediate(scope, language, after);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    },
  };
}

/** The answers kept for idempotency keys (migration 13; src/data/idempotency.ts). */
export function createKeptReplies(db: SqliteDb) {
  const q = {
    // A row past its window is taken over; a live one is not ("taken").
    claim: db.prepare<[string, string, string, string, number, number]>(
      `INSERT INTO idempotency_keys (tenant_id, app_id, key_hash, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, 0, NULL, ?)
       ON CONFLICT (tenant_id, app_id, key_hash) DO UPDATE SET request_hash = excluded.request_hash, status = 0, body = NULL, created_at = excluded.created_at
       WHERE idempotency_keys.created_at < ?`,
    ),
    reply: db.prepare<[number, string | null, string, string, string]>("UPDATE idempotency_keys SET status = ?, body = ? WHERE tenant_id = ? AND app_id = ? AND key_hash = ?"),
    get: db.prepare<[string, string, string, number], { request_hash: string; status: number; body: string | null }>(
      "SELECT request_hash, status, body FROM idempotency_keys WHERE tenant_id = ? AND app_id = ? AND key_hash = ? AND created_at >= ?",
    ),
    purge: db.prepare<[number]>("DELETE FROM idempotency_keys WHERE created_at < ?"),
  };
  return {
    /** Inside the batch's transaction: false when the key holds a live answer. */
    claim: (k: { appId: string; tenantId: string; keyHash: string; requestHash: string; expiredBefore: number }, now: number) =>
      q.claim.run(k.tenantId, k.appId, k.keyHash, k.requestHash, now, k.expiredBefore).changes > 0,
    keep: (k: { appId: string; tenantId: string; keyHash: string }, status: number, body: string | null) => void q.reply.run(status, body, k.tenantId, k.appId, k.keyHash),
    get(appId: string, tenantId: string, keyHash: string, notBefore: number): KeptReply | undefined {
      const r = q.get.get(tenantId, appId, keyHash, notBefore);
      return r && { requestHash: r.request_hash, status: r.status, body: r.body };
    },
    purge: (before: number) => q.purge.run(before).changes,
  };
}
