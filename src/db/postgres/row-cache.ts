import type { PgChanges } from "./changes.ts";

/**
 * Rows kept in memory while the change feed is live (changes.ts), dropped when a change to
 * them is announced (`<prefix><id>`, or `<prefix>*` for all of them). A hit is answered without a round trip; a miss reads the database.
 *
 * A read racing an announcement: a row read before another node's commit may come back
 * after that commit's announcement was handled. Such a read is answered but not kept (its
 * id was announced while it was in flight), so the cache never holds what an announcement
 * already dropped. Concurrent misses of one id share one read.
 */
export function createPgRowCache<T>(changes: PgChanges, prefix: string, load: (id: string) => Promise<T | undefined>, maxEntries: number) {
  const entries = new Map<string, { value: T; epoch: number }>();
  /** id → the read in flight, and whether its id was announced meanwhile */
  const reading = new Map<string, { promise: Promise<T | undefined>; stale: boolean }>();

  changes.on((payload) => {
    if (payload !== "*" && !payload.startsWith(prefix)) return;
    const id = payload === "*" ? "*" : payload.slice(prefix.length);
    if (id === "*") {
      entries.clear();
      for (const r of reading.values()) r.stale = true;
      return;
    }
    entries.delete(id);
    const r = reading.get(id);
    if (r) r.stale = true;
  });

  function read(id: string): Promise<T | undefined> {
    const inFlight = reading.get(id);
    if (inFlight) return inFlight.promise;
    const epoch = changes.epoch;
    const state = { promise: undefined as unknown as Promise<T | undefined>, stale: false };
    state.promise = load(id).then(
      (value) => {
        reading.delete(id);
        // Absent rows are not kept: an insert is not announced.
        if (value !== undefined && !state.stale && changes.live && changes.epoch === epoch) {
          if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
          entries.set(id, { value, epoch });
        }
        return value;
      },
      (e: unknown) => {
        reading.delete(id);
        throw e;
      },
    );
    reading.set(id, state);
    return state.promise;
  }

  return {
    /** The row, at once when kept, the feed is live and `usable` accepts it; else read (and kept when safe). */
    get(id: string, usable?: (value: T) => boolean): T | undefined | Promise<T | undefined> {
      if (changes.live) {
        const hit = entries.get(id);
        if (hit && hit.epoch === changes.epoch && (!usable || usable(hit.value))) return hit.value;
      } else if (entries.size > 0) {
        entries.clear();
      }
      return read(id);
    },
    get size() {
      return entries.size;
    },
  };
}

export type PgRowCache<T> = ReturnType<typeof createPgRowCache<T>>;
