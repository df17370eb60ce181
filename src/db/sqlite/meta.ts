import type { SqliteDb } from "./connection.ts";

/** Small facts about the server kept beside the data, e.g. the public URL `serve` announced. */
export function createMetaRepo(db: SqliteDb) {
  const q = {
    get: db.prepare<[string], { value: string }>("SELECT value FROM server_meta WHERE key = ?"),
    set: db.prepare<[string, string]>("INSERT INTO server_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
  };
  const ping = db.prepare("SELECT 1");
  return {
    async ping(): Promise<void> {
      ping.get();
    },
    async get(key: string): Promise<string | undefined> {
      return q.get.get(key)?.value;
    },
    async set(key: string, value: string): Promise<void> {
      q.set.run(key, value);
    },
  };
}
