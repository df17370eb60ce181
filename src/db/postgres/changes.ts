import { randomBytes } from "node:crypto";
import postgres from "postgres";

/** The channel migration 5's triggers announce changes on. */
export const CHANGES_CHANNEL = "tenantd_changes";
/** Reconnect delays after the listening connection closes: 100 ms doubling to 5 s. */
const RETRY_MS = { first: 100, max: 5_000 };
/** A probe goes round (pool → database → listening connection) this often, and must be back by the next. */
export const HEARTBEAT_MS = 2_000;

/** `payload` as the triggers send it (`s:<session id>`, `t:<tenant id>`, `b`, `i`), or `*`: forget everything. */
export type ChangeHandler = (payload: string) => void;

/**
 * One connection per node that LISTENs on `tenantd_changes`: every commit that ends or
 * extends a session, changes a tenant, touches plans, subscriptions or family membership, or
 * an automatic index, is announced there (migration 5's triggers), by whichever node or CLI
 * wrote it.
 *
 * Caches built on it (row-cache.ts) answer from memory only while `live`. Live means more
 * than connected: every HEARTBEAT_MS a probe is announced through the node's pool and must
 * come back on the listening connection before the next one goes. A connection that closed,
 * hangs, or sits behind a pooler that does not deliver notifications (PgBouncer in
 * transaction mode) fails the probe; the caches are emptied at once (`*`, a new `epoch`),
 * every read goes to the database, and they fill again once a probe comes back.
 */
export interface PgChanges {
  /** True while announcements are known to arrive. */
  readonly live: boolean;
  /** Moves whenever `live` changes: entries of an older epoch are not trusted. */
  readonly epoch: number;
  on(handler: ChangeHandler): void;
  /**
   * This process's own commit, handled at once: its announcement from the database comes
   * back a moment later, and a read in between must not find the old row in memory.
   */
  announce(payload: string): void;
  /**
   * Starts listening; `send` announces a payload through the node's pool (the probe's way
   * round). Never rejects: a failure is logged and retried, the caches stay off meanwhile.
   */
  start(send: (payload: string) => Promise<unknown>): Promise<void>;
  close(): Promise<void>;
}

export function createPgChanges(url: string, log: (message: string) => void = () => {}): PgChanges {
  const handlers: ChangeHandler[] = [];
  const probePrefix = `p:${randomBytes(6).toString("hex")}:`;
  let listening = false;
  let live = false;
  let epoch = 0;
  let closed = false;
  let retryMs = RETRY_MS.first;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let probeSeq = 0;
  /** The probe sent last and not seen back yet. */
  let outstanding: string | undefined;
  let send: (payload: string) => Promise<unknown> = async () => undefined;

  const dispatch = (payload: string) => {
    for (const h of handlers) h(payload);
  };
  function setLive(next: boolean) {
    if (live === next) return;
    live = next;
    epoch++;
    dispatch("*");
  }

  // onnotify is the driver's own hook (its listen() uses it) but missing from its types.
  const options = {
    max: 1,
    idle_timeout: 0,
    max_lifetime: null,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: "tenantd-changes" },
    onnotify(channel: string, payload: string) {
      if (channel !== CHANGES_CHANNEL) return;
      if (payload.startsWith("p:")) {
        if (payload === outstanding) {
          outstanding = undefined;
          setLive(true);
        }
        return;
      }
      dispatch(payload);
    },
    onclose() {
      if (!listening) return;
      listening = false;
      setLive(false);
      if (!closed) schedule();
    },
  };
  const sql = postgres(url, options as postgres.Options<{}>);

  function probe() {
    if (!listening || closed) return;
    // The last probe did not come back within a beat: announcements are not arriving.
    if (outstanding !== undefined) setLive(false);
    const payload = (outstanding = `${probePrefix}${++probeSeq}`);
    send(payload).catch(() => undefined);
  }

  async function listen(): Promise<void> {
    await sql.unsafe(`LISTEN ${CHANGES_CHANNEL}`);
    listening = true;
    retryMs = RETRY_MS.first;
    outstanding = undefined;
    probe();
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
    start(sender) {
      send = sender;
      heartbeat = setInterval(probe, HEARTBEAT_MS);
      heartbeat.unref();
      return attempt();
    },
    async close() {
      closed = true;
      listening = false;
      setLive(false);
      if (retryTimer) clearTimeout(retryTimer);
      if (heartbeat) clearInterval(heartbeat);
      await sql.end({ timeout: 1 });
    },
  };
}
