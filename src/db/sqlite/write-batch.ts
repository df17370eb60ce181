import type { SqliteDb } from "./connection.ts";

/**
 * Group commit: the writes asked for during one turn of the event loop run together in one
 * IMMEDIATE transaction when the turn ends (`setImmediate`), and each caller's promise
 * settles once that transaction has committed, so no one hears of a write that could still
 * be lost. Under load several requests' writes arrive in one turn; each commit writes its
 * pages to the WAL once, so a counter many requests bump (a usage increment) is one WAL
 * frame per turn instead of one per request.
 *
 * Each write runs alone, in order, as it would have on its own: a write that fails with an
 * error SQLite undoes by itself (a constraint) fails alone; an error that ends the
 * transaction (I/O, SQLITE_BUSY from another connection's lock) fails every write of the
 * batch, none of which was kept.
 */
export interface WriteBatch {
  add<T>(write: () => T): Promise<T>;
}

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  failed: boolean;
  outcome: unknown;
}

const batches = new WeakMap<SqliteDb, WriteBatch>();

/** The batch of one connection: every repository over it shares it, so a turn's writes are one commit. */
export function writeBatch(db: SqliteDb): WriteBatch {
  let batch = batches.get(db);
  if (!batch) batches.set(db, (batch = createWriteBatch(db)));
  return batch;
}

function createWriteBatch(db: SqliteDb): WriteBatch {
  let queue: Pending[] = [];

  const runAll = db.transaction((items: Pending[]) => {
    for (const item of items) {
      try {
        item.outcome = item.write();
      } catch (error) {
        // Still in the transaction: SQLite undid this write alone (its statement, or its savepoint).
        if (!db.inTransaction) throw error;
        item.failed = true;
        item.outcome = error;
      }
    }
  });

  function flush(): void {
    const items = queue;
    queue = [];
    try {
      runAll.immediate(items);
    } catch (error) {
      for (const item of items) item.reject(item.failed ? item.outcome : error);
      return;
    }
    for (const item of items) {
      if (item.failed) item.reject(item.outcome);
      else item.resolve(item.outcome);
    }
  }

  return {
    add<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ write, resolve: resolve as (value: unknown) => void, reject, failed: false, outcome: undefined });
      });
    },
  };
}
