import type { SqliteDb } from "./connection.ts";

/**
 * Keeps the server's writes from stalling its event loop while an automatic index builds.
 *
 * The build runs on a worker thread's own connection (auto-index-build.ts), which holds the
 * database's write lock until the index is complete. A write on the server's connection
 * would meanwhile sit in SQLite's busy wait, synchronously, on the event loop. So for the
 * build the gate sets that connection's busy_timeout to 0: the write fails at once with
 * SQLITE_BUSY, and the repository call waits (asynchronously) for the build to end, then
 * runs again with the usual timeout. Reads go on meanwhile (WAL).
 */
export interface WriteGate {
  /** A build holds the gate. */
  readonly held: boolean;
  /** Resolves when no build holds the gate. */
  released(): Promise<void>;
  /**
   * Makes writes fail fast until the returned function is called (once the build is over).
   * One build at a time: waits for the gate first.
   */
  hold(): Promise<() => void>;
}

const gates = new WeakMap<SqliteDb, WriteGate>();

/** The gate of one connection: the builds and the repositories over it share it. */
export function writeGate(db: SqliteDb): WriteGate {
  let gate = gates.get(db);
  if (!gate) gates.set(db, (gate = createGate(db)));
  return gate;
}

function createGate(db: SqliteDb): WriteGate {
  let open: Promise<void> | undefined;
  return {
    get held() {
      return open !== undefined;
    },
    released: () => open ?? Promise.resolve(),
    async hold() {
      while (open) await open;
      if (!db.open) return () => {};
      let release!: () => void;
      open = new Promise<void>((resolve) => (release = resolve));
      const timeout = db.pragma("busy_timeout", { simple: true }) as number;
      db.pragma("busy_timeout = 0");
      return () => {
        if (db.open) db.pragma(`busy_timeout = ${timeout}`);
        open = undefined;
        release();
      };
    },
  };
}

const isBusy = (error: unknown) => typeof (error as { code?: unknown })?.code === "string" && (error as { code: string }).code.startsWith("SQLITE_BUSY");

/**
 * The repositories with each method retried after a build when the build made it fail.
 *
 * Here, and not in the statements or in one repository: every repository method is one
 * atomic unit whose SQL runs synchronously (no await between its statements), so the method
 * is the smallest piece that can wait, and all of them write on the same connection. Only a
 * call made while a build holds the gate can meet the zero timeout, so other calls pass
 * through untouched. Such a call runs again only when it failed with SQLITE_BUSY and the
 * connection's `total_changes()` is what it was before the call: its first write was refused
 * (a BEGIN IMMEDIATE, or a single statement), nothing of it was applied, and running it again
 * cannot write twice. A call that had already written a row and then met the lock (two
 * statements outside a transaction, the worker taking the lock between them) fails with the
 * error rather than risk a second copy.
 */
export function gateWrites<T extends object>(db: SqliteDb, repositories: T): T {
  const gate = writeGate(db);
  const changes = db.prepare<[], number>("SELECT total_changes()").pluck();
  const wrap = (repo: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(repo).map(([name, member]) => {
        if (typeof member !== "function") return [name, member];
        const fn = member as (...args: unknown[]) => unknown;
        // Synchronous members (steps run inside another method's transaction) return as they are.
        return [name, (...args: unknown[]) => (gate.held ? retried(fn, repo, args) : fn.apply(repo, args))];
      }),
    );

  function retried(fn: (...args: unknown[]) => unknown, repo: unknown, args: unknown[]): unknown {
    if (!db.open) return fn.apply(repo, args);
    const before = changes.get();
    const result = fn.apply(repo, args);
    if (!(result instanceof Promise)) return result;
    // Read now, before any other call runs: the method's SQL has all run by the time it returns.
    const applied = db.open && changes.get() !== before;
    return result.catch(async (error: unknown) => {
      if (!isBusy(error) || !db.open || applied) throw error;
      await gate.released();
      // The next build starts only after the calls waiting for this one have run (drain in
      // record-auto-indexes.ts yields first); should it hold the gate already, wait again.
      return gate.held ? retried(fn, repo, args) : fn.apply(repo, args);
    });
  }

  return Object.fromEntries(Object.entries(repositories).map(([k, repo]) => [k, wrap(repo as Record<string, unknown>)])) as T;
}
