import postgres from "postgres";

/** The channel migration 5's triggers announce changes on. */
export const CHANGES_CHANNEL = "tenantd_changes";
/** Reconnect delays after the listening connection closes: 100 ms doubling to 5 s. */
const RETRY_MS = { first: 100, max: 5_000 };

/** `payload` as the triggers send it (`s:<session id>`, `t:<tenant id>`, `b`), or `*`: forget everything. */
export type ChangeHandler = (payload: string) => void;

/**
 * One connection per node that LISTENs on `tenantd_changes`: every commit that ends or
 * extends a session, changes a tenant, or touches plans, subscriptions or family membership
 * is announced there (migration 5's triggers), by whichever node or CLI wrote it.
 *
 * Caches built on it (row-cache.ts) answer from memory only while `live`: from the moment
 * the LISTEN is in place until the connection closes. A close empties them (through
 * `epoch`) before anything else runs, since announcements made while no one listened are
 * lost; they fill again once the LISTEN is back.
 */
export interface PgChanges {
  /** True while announcements are being received. */
  readonly live: boolean;
  /** Moves whenever the listening connection closes or opens: entries of an older epoch are not trusted. */
  readonly epoch: number;
  on(handler: ChangeHandler): void;
  /**
   * This process's own commit, handled at once: its announcement from the database comes
   * back a moment later, and a read in between must not find the old row in memory.
   */
  announce(payload: string): void;
  /** Starts listening; never rejects (a failure is logged and retried, the caches stay off meanwhile). */
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createPgChanges(url: string, log: (message: string) => void = () => {}): PgChanges {
  const handlers: ChangeHandler[] = [];
  let live = false;
  let epoch = 0;
  let closed = false;
  let retryMs = RETRY_MS.first;
  let retryTimer: NodeJS.Timeout | undefined;
  const dispatch = (payload: string) => {
    for (const h of handlers) h(payload);
  };

  // onnotify is the driver's own hook (its listen() uses it) but missing from its types.
  const options = {
    max: 1,
    idle_timeout: 0,
    max_lifetime: null,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: "tenantd-changes" },
    onnotify(channel: string, payload: string) {
      if (channel === CHANGES_CHANNEL) dispatch(payload);
    },
    onclose() {
      if (!live) return;
      live = false;
      epoch++;
      dispatch("*");
      if (!closed) schedule();
    },
  };
  const sql = postgres(url, options as postgres.Options<{}>);

  async function listen(): Promise<void> {
    await sql.unsafe(`LISTEN ${CHANGES_CHANNEL}`);
    // Entries read before this point may have missed an announcement: a new epoch.
    epoch++;
    dispatch("*");
    live = true;
    retryMs = RETRY_MS.first;
  }

  function attempt(): Promise<void> {
    return listen().catch((e: unknown) => {
      if (closed) return;
      log(`tenantd: listening for changes on PostgreSQL failed (${(e as Error).message}); retrying in ${retryMs} ms, answering from the database meanwhile`);
      schedule();
      retryMs = Math.min(retryMs * 2, RETRY_MS.max);
    });
  }

  function schedule() {
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void attempt();
    }, retryMs);
    retryTimer.unref();
  }

  return {
    get live() {
      return live;
    },
    get epoch() {
      return epoch;
    },
    on(handler) {
      handlers.push(handler);
    },
    announce: dispatch,
    start: attempt,
    async close() {
      closed = true;
      live = false;
      epoch++;
      dispatch("*");
      if (retryTimer) clearTimeout(retryTimer);
      await sql.end({ timeout: 1 });
    },
  };
}
