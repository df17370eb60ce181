import type { Core } from "../core.ts";
import type { RealtimeChangeRow } from "../db/types.ts";
import { HEARTBEAT_MS } from "../db/postgres/changes.ts";
import { newId } from "../crypto/random.ts";
import { toIso } from "../clock.ts";
import { compileMatcher, type FeedRecord, type Matcher } from "./matcher.ts";
import { parseFilter } from "../data/query.ts";
import { mayReadOrgRecords } from "../orgs/records.ts";

/**
 * The realtime hub of one process: its open streams, the feed they read, and what the
 * store's writes are told (`wants`). docs/realtime.md is the user's account of it.
 *
 * The feed. A record write of an app that `wants` appends its change to `realtime_changes`
 * in its own transaction (RecordScope.feed), so a change is in the feed exactly when its
 * write committed. `seq` order is commit order (one writer on SQLite; on PostgreSQL the
 * feed's advisory lock, held from the append to the commit). Every process tails the table
 * past the last seq it read, woken by its own writes and, on PostgreSQL, by the `r` each
 * append announces on tenantd_changes (the existing listening connection: no second one),
 * and once a second in case a wake-up was lost. A stream's position is a seq: replaying
 * from it is a read of the same table, so a stream resumes on any node.
 *
 * Who pays. A write costs nothing extra unless its app `wants`: a process wants an app while
 * it has a stream of that app, and for a lease after (the retention window and a margin, so
 * a stream resuming within the window finds every write since it left). On PostgreSQL a node
 * opening an app's first stream, and every ANNOUNCE_MS while it has one, records the lease in
 * `realtime_interest` and announces it (`r+:<app>`) in the same transaction; every node holds
 * each announced app for the lease. A node reads the table whenever its change channel goes
 * live (an announcement committed before it listened is in the table, one after reaches it
 * on the channel) and feeds every write until it has; while its channel is not live it reads
 * the table again, at most once a second, when a write asks. So: every write that commits
 * after an app's first stream was announced is fed, except on a node that had not yet
 * handled the announcement: a live node handles it within the channel's delivery
 * (milliseconds), a node that is not live within a second. A resumed stream never meets that
 * moment: its app's lease outlives the retention window.
 */

/** Every node re-announces the apps of its open streams this often. */
export const ANNOUNCE_MS = 30_000;
/** How often the hub's timer runs: session checks, then everything slower by counts of it. */
const TICK_MS = 250;
/** The feed is read at least this often, in case a wake-up was lost. */
const TAIL_EVERY_MS = 1_000;
/** Pruning of the feed and of expired tickets. */
const PRUNE_EVERY_MS = 60_000;
/** Past the retention window, a margin for clock skew between nodes before changes are pruned. */
const PRUNE_MARGIN_MS = 60_000;
/** Changes read per query of the feed. */
const PAGE = 500;
/** Sessions of open streams checked per query. */
const SESSION_BATCH = 1000;

export type RecordEventType = "created" | "updated" | "deleted" | "left";

export interface SubscriptionSpec {
  /** the client's own id for it; a generated one when absent */
  id?: string;
  collection: string;
  /** the filter as JSON text, parsed with the list filter's parser */
  filter?: string;
  record?: string;
  /** an organization's records (its id), checked by the route: the member may read them */
  org?: string;
}

export interface Subscription {
  id: string;
  collection: string;
  filter: string | null;
  record: string | null;
  matcher: Matcher | null;
  /** changes up to this seq committed before the subscription existed: not its to see */
  from: number;
  /** whose records: the stream's tenant, or an organization (its id, which is its records' owner id) */
  owner: string;
}

/** A refusal of a subscription change, as the HTTP layer answers it. */
export interface HubRefusal {
  refused: { code: "not_found" | "conflict" | "invalid_filter" | "invalid_request"; message: string };
}

export interface StreamOwner {
  appId: string;
  tenantId: string;
  sessionId: string;
  ip: string;
  /**
   * A developer watching the tenant's records (the dashboard, src/realtime/admin-live.ts):
   * `sessionId` is then the developer session's token hash. Such a stream ends with that
   * session or when the app is no longer the developer's, and is not the tenant's to count.
   */
  developerId?: string;
}

interface Stream extends StreamOwner {
  id: string;
  subs: Map<string, Subscription>;
  /** organizations this stream has subscriptions to, with how many each: it is listed under each too */
  orgs: Map<string, number>;
  /** the last seq this stream has been brought past */
  position: number;
  /** opened with Last-Event-ID: replayed from here once the first subscriptions arrive */
  resumeFrom: number | undefined;
  /** a replay is running: live changes wait here, in order */
  pending: ParsedChange[] | undefined;
  send(text: string): void;
  end(text?: string): void;
  closed: boolean;
}

interface ParsedChange {
  row: RealtimeChangeRow;
  after: FeedRecord | undefined;
  before: FeedRecord | undefined;
}

const encoder = new TextEncoder();

function parseChange(row: RealtimeChangeRow): ParsedChange {
  const isRecord = row.kind === "created" || row.kind === "updated" || row.kind === "deleted";
  return {
    row,
    after: isRecord && row.data ? (JSON.parse(row.data) as FeedRecord) : undefined,
    before: isRecord && row.before ? (JSON.parse(row.before) as FeedRecord) : undefined,
  };
}

const publicRecord = (r: FeedRecord) => ({ id: r.id, data: r.data, createdAt: toIso(r.createdAt), updatedAt: toIso(r.updatedAt) });

/** A resume position as streams send it: `<seq>.<ms>`, the seq reached and when (the sending node's clock). */
export function positionId(seq: number, at: number): string {
  return `${seq}.${at}`;
}

export function parsePosition(text: string | null | undefined): { seq: number; at: number } | undefined {
  const m = text ? /^(\d{1,18})\.(\d{1,16})$/.exec(text.trim()) : null;
  return m ? { seq: Number(m[1]), at: Number(m[2]) } : undefined;
}

export type RealtimeHub = ReturnType<typeof createRealtimeHub>;

export function createRealtimeHub(core: Core) {
  const cfg = core.config.realtime;
  const retentionMs = cfg.retentionSeconds * 1000;
  const leaseMs = retentionMs + PRUNE_MARGIN_MS + ANNOUNCE_MS * 2;
  const streams = new Map<string, Stream>();
  const byTenant = new Map<string, Set<Stream>>();
  const perIp = new Map<string, number>();
  /** developer → their open live views on this node */
  const perDeveloper = new Map<string, number>();
  /** app → open streams of it on this node */
  const localApps = new Map<string, number>();
  /** app → until when a write of it is fed (Date.now() ms): after a local stream closed, or announced by another node */
  const leases = new Map<string, number>();
  const changes = core.changes;
  /** On PostgreSQL: the interest table has been read since the channel last went live (until then every write is fed). */
  let loaded = false;
  let loadedAt = 0;
  let loading: Promise<void> | undefined;
  let last = 0;
  /** the feed was not read while no stream was open: `last` must be brought to the head first */
  let stale = true;
  let tailing: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let ticks = 0;
  let closed = false;
  /** remote subscription requests waiting for their answer (PostgreSQL) */
  const waiting = new Map<string, (answer: unknown) => void>();
  const nodeId = newId("node");

  const tenantKey = (appId: string, tenantId: string) => `${appId}\u0000${tenantId}`;

  changes?.on((payload) => {
    if (payload === "r") return kick();
    if (payload === "*") {
      if (changes.live) {
        loaded = false;
        void loadInterest();
      }
      return kick();
    }
    if (payload.startsWith("r+:")) {
      leases.set(payload.slice(3), Date.now() + leaseMs);
      return;
    }
    if (payload.startsWith("rq:")) return void answerRemote(payload.slice(3));
    if (payload.startsWith("rp:")) {
      const at = payload.indexOf(":", 3);
      const resolve = waiting.get(payload.slice(3, at));
      if (resolve) resolve(JSON.parse(payload.slice(at + 1)));
    }
  });

  /**
   * Reads which apps any node wants (realtime_interest). A node does so when its channel
   * goes live: an announcement committed before it listened is in the table, one after
   * reaches it on the channel. While its channel is not live it reads again, at most once a
   * second, when a write asks.
   */
  function loadInterest(): Promise<void> {
    loading ??= (async () => {
      try {
        const rows = await core.db.realtime.interest(Date.now());
        for (const r of rows) leases.set(r.appId, Math.max(leases.get(r.appId) ?? 0, r.until));
        loaded = true;
        loadedAt = Date.now();
      } catch (e) {
        if (!closed) core.log.warn("realtime: reading which apps have streams failed; every write is fed meanwhile", { error: e });
      } finally {
        loading = undefined;
      }
    })();
    return loading;
  }

  /** Whether a write of this app goes into the feed (see the file's comment). Called on every record write: map lookups only. */
  function wants(appId: string): boolean {
    if (localApps.has(appId)) return true;
    if (changes) {
      if (!loaded) {
        void loadInterest();
        return true;
      }
      if (!changes.live && Date.now() - loadedAt > 1000) void loadInterest();
    }
    const until = leases.get(appId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    leases.delete(appId);
    return false;
  }

  const announce = (appId: string) => (changes ? core.db.realtime.announce(appId, Date.now() + leaseMs) : Promise.resolve());

  function kick(): void {
    if (closed) return;
    if (streams.size === 0) {
      stale = true;
      return;
    }
    if (tailing) {
      again = true;
      return;
    }
    tailing = (async () => {
      try {
        do {
          again = false;
          if (stale) {
            last = Math.max(last, await core.db.realtime.head());
            stale = false;
          }
          for (;;) {
            const rows = await core.db.realtime.tail(last, PAGE);
            for (const row of rows) dispatch(parseChange(row));
            if (rows.length > 0) last = rows.at(-1)!.seq;
            if (rows.length < PAGE) break;
          }
        } while (again && !closed);
      } catch (e) {
        if (!closed) core.log.warn("realtime: reading the change feed failed; trying again within a second", { error: e });
      } finally {
        tailing = undefined;
      }
    })();
  }

  function dispatch(change: ParsedChange): void {
    const set = byTenant.get(tenantKey(change.row.appId, change.row.tenantId));
    if (!set) return;
    for (const s of set) offer(s, change);
  }

  /** A change to a stream of its tenant: in seq order, each once. */
  function offer(s: Stream, change: ParsedChange): void {
    if (s.closed || change.row.seq <= s.position) return;
    if (s.pending) {
      s.pending.push(change);
      return;
    }
    if (s.resumeFrom !== undefined) return; // waiting for its subscriptions: the replay reads the feed itself
    deliver(s, change);
  }

  function deliver(s: Stream, change: ParsedChange): void {
    const { row } = change;
    s.position = row.seq;
    const id = positionId(row.seq, core.clock());
    if (change.after === undefined && change.before === undefined) {
      // A tenant event: every stream of the tenant gets it, subscribed or not.
      if (row.tenantId !== s.tenantId) return;
      s.send(`id: ${id}\nevent: tenant\ndata: {"type":${JSON.stringify(row.kind)},"data":${row.data ?? "null"}}\n\n`);
      return;
    }
    const matched: string[] = [];
    const left: string[] = [];
    for (const sub of s.subs.values()) {
      if (sub.collection !== row.collection || sub.owner !== row.tenantId || row.seq <= sub.from) continue;
      if (sub.record !== null) {
        if (sub.record === row.recordId) matched.push(sub.id);
        continue;
      }
      const now = change.after !== undefined && sub.matcher!(change.after);
      if (now) matched.push(sub.id);
      else if (row.kind !== "created" && change.before !== undefined && sub.matcher!(change.before)) {
        if (row.kind === "deleted") matched.push(sub.id);
        else left.push(sub.id);
      }
    }
    if (matched.length === 0 && left.length === 0) return;
    const type: RecordEventType = matched.length > 0 ? (row.kind as RecordEventType) : "left";
    const body: Record<string, unknown> = { collection: row.collection, id: row.recordId, subscriptions: matched.length > 0 ? matched : left };
    if (type === "created" || type === "updated") body.record = publicRecord(change.after!);
    if (type === "updated" && left.length > 0) body.left = left;
    s.send(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(body)}\n\n`);
  }

  /** Sends every change of the stream's tenant after its resume position, then what arrived meanwhile. */
  async function replay(s: Stream, from: number): Promise<void> {
    s.pending = [];
    try {
      let at = from;
      for (;;) {
        const rows = await core.db.realtime.changesOf(s.appId, s.tenantId, at, PAGE);
        for (const row of rows) if (!s.closed && row.seq > s.position) deliver(s, parseChange(row));
        if (rows.length > 0) at = rows.at(-1)!.seq;
        if (rows.length < PAGE || s.closed) break;
      }
    } finally {
      const waitingChanges = s.pending;
      s.pending = undefined;
      for (const c of waitingChanges) if (!s.closed && c.row.seq > s.position) deliver(s, c);
    }
  }

  function addStreamToMaps(s: Stream): void {
    streams.set(s.id, s);
    const key = tenantKey(s.appId, s.tenantId);
    let set = byTenant.get(key);
    if (!set) byTenant.set(key, (set = new Set()));
    set.add(s);
    perIp.set(s.ip, (perIp.get(s.ip) ?? 0) + 1);
    if (s.developerId !== undefined) perDeveloper.set(s.developerId, (perDeveloper.get(s.developerId) ?? 0) + 1);
    localApps.set(s.appId, (localApps.get(s.appId) ?? 0) + 1);
  }

  /** Lists the stream under an organization it subscribes to, so the organization's changes reach it. */
  function watchOrg(s: Stream, orgId: string): void {
    const n = s.orgs.get(orgId) ?? 0;
    s.orgs.set(orgId, n + 1);
    if (n > 0) return;
    const key = tenantKey(s.appId, orgId);
    let set = byTenant.get(key);
    if (!set) byTenant.set(key, (set = new Set()));
    set.add(s);
  }

  function unwatchOrg(s: Stream, orgId: string, all = false): void {
    const n = all ? 0 : (s.orgs.get(orgId) ?? 1) - 1;
    if (n > 0) return void s.orgs.set(orgId, n);
    s.orgs.delete(orgId);
    const key = tenantKey(s.appId, orgId);
    const set = byTenant.get(key);
    set?.delete(s);
    if (set?.size === 0) byTenant.delete(key);
  }

  let checkingOrgs = false;
  /**
   * Ends the organization subscriptions of members who may no longer read its records
   * (removed, left, a role without records.read, the organization deleted): at once for a
   * change made on this node (orgChanged), within a second for one made on another.
   */
  async function checkOrgAccess(only?: { appId: string; orgId: string }): Promise<void> {
    if (!only && checkingOrgs) return;
    if (!only) checkingOrgs = true;
    try {
      for (const s of [...streams.values()]) {
        for (const orgId of [...s.orgs.keys()]) {
          if (only && (only.appId !== s.appId || only.orgId !== orgId)) continue;
          if (s.closed || (await mayReadOrgRecords(core, s.appId, orgId, s.tenantId))) continue;
          const ended = [...s.subs.values()].filter((sub) => sub.owner === orgId).map((sub) => sub.id);
          for (const id of ended) s.subs.delete(id);
          unwatchOrg(s, orgId, true);
          s.send(`event: unsubscribed\ndata: ${JSON.stringify({ subscriptions: ended, reason: "org_access_ended", message: "You can no longer read this organization's records (removed, left, a role without records.read, or the organization deleted)." })}\n\n`);
        }
      }
    } catch (e) {
      core.log.warn("realtime: checking organization members of open streams failed", { error: e });
    } finally {
      if (!only) checkingOrgs = false;
    }
  }

  function removeStream(s: Stream): void {
    if (!streams.delete(s.id)) return;
    for (const orgId of [...s.orgs.keys()]) unwatchOrg(s, orgId, true);
    const key = tenantKey(s.appId, s.tenantId);
    const set = byTenant.get(key);
    set?.delete(s);
    if (set?.size === 0) byTenant.delete(key);
    const ip = (perIp.get(s.ip) ?? 1) - 1;
    if (ip <= 0) perIp.delete(s.ip);
    else perIp.set(s.ip, ip);
    if (s.developerId !== undefined) {
      const views = (perDeveloper.get(s.developerId) ?? 1) - 1;
      if (views <= 0) perDeveloper.delete(s.developerId);
      else perDeveloper.set(s.developerId, views);
    }
    const apps = (localApps.get(s.appId) ?? 1) - 1;
    if (apps <= 0) {
      localApps.delete(s.appId);
      leases.set(s.appId, Math.max(leases.get(s.appId) ?? 0, Date.now() + leaseMs));
    } else localApps.set(s.appId, apps);
    if (streams.size === 0) stop();
  }

  function start(): void {
    if (timer || closed) return;
    timer = setInterval(tick, TICK_MS);
    timer.unref();
  }

  function stop(): void {
    if (timer) clearInterval(timer);
    timer = undefined;
  }

  function tick(): void {
    ticks++;
    void checkSessions();
    if ((ticks * TICK_MS) % TAIL_EVERY_MS === 0) kick();
    if ((ticks * TICK_MS) % TAIL_EVERY_MS === 0) void checkOrgAccess();
    if ((ticks * TICK_MS) % (cfg.keepAliveSeconds * 1000) < TICK_MS) {
      const now = core.clock();
      for (const s of streams.values()) if (!s.pending && s.resumeFrom === undefined) s.send(`: keep-alive\nid: ${positionId(s.position, now)}\n\n`);
    }
    if ((ticks * TICK_MS) % ANNOUNCE_MS === 0) for (const appId of localApps.keys()) void announce(appId).catch(() => undefined);
    if ((ticks * TICK_MS) % PRUNE_EVERY_MS === 0) void prune();
  }

  async function prune(): Promise<void> {
    try {
      await core.db.realtime.prune(core.clock() - retentionMs - PRUNE_MARGIN_MS);
      await core.db.realtime.purgeTickets(core.clock());
    } catch (e) {
      core.log.warn("realtime: pruning the change feed failed", { error: e });
    }
  }

  /** Why a developer's live view of one tenant must end now, or undefined while it may go on. */
  async function developerEndedWhy(s: Stream, now: number): Promise<{ reason: string; message: string } | undefined> {
    const developer = await core.db.developers.findBySession(s.sessionId, now);
    if (developer?.id !== s.developerId || (await core.db.apps.findById(s.appId))?.ownerId !== s.developerId) {
      return { reason: "session_ended", message: "Your developer session has ended, or this app is no longer yours. Sign in again." };
    }
    if (!(await core.db.tenants.findById(s.appId, s.tenantId))) return { reason: "tenant_deleted", message: "This tenant was deleted: it has no records left to watch." };
    return undefined;
  }

  /**
   * The streams one check answers for: a tenant session's (one tenant of one app), or a
   * developer session's view of one tenant, since one developer session watches any of its
   * apps and each may change hands on its own.
   */
  const checkKey = (s: Stream) => (s.developerId === undefined ? s.sessionId : `${s.sessionId}\u0000${tenantKey(s.appId, s.tenantId)}`);

  let checking = false;
  /** Ends, within a tick, every stream whose session ended (logout, password reset, deletion, refresh-token reuse), on whichever node ended it. */
  async function checkSessions(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      const now = core.clock();
      const groups = new Map<string, Stream[]>();
      for (const s of streams.values()) {
        const key = checkKey(s);
        const list = groups.get(key);
        if (list) list.push(s);
        else groups.set(key, [s]);
      }
      const tenantSessions: { id: string; tenantId: string }[] = [];
      for (const [key, list] of groups) {
        if (list[0]!.developerId === undefined) {
          tenantSessions.push({ id: key, tenantId: list[0]!.tenantId });
          continue;
        }
        const why = await developerEndedWhy(list[0]!, now);
        if (why) for (const s of list) s.end(`event: ended\ndata: ${JSON.stringify(why)}\n\n`);
      }
      // One query per SESSION_BATCH tenant sessions, answering the ended ones only, not one per session: 10,000 streams, 4 ticks a second.
      for (let i = 0; i < tenantSessions.length; i += SESSION_BATCH) {
        for (const sid of await core.db.realtime.endedSessions(tenantSessions.slice(i, i + SESSION_BATCH), now)) {
          const list = groups.get(sid) ?? [];
          for (const s of list) s.end(`event: ended\ndata: {"reason":"session_ended","message":"This session has ended (signed out, password reset or account deleted). Sign in again."}\n\n`);
        }
      }
    } catch (e) {
      core.log.warn("realtime: checking the sessions of open streams failed", { error: e });
    } finally {
      checking = false;
    }
  }

  /** Subscriptions of `specs` parsed and checked: their refusal, or the subscriptions to add. */
  function build(specs: SubscriptionSpec[], tenantId: string): Subscription[] | HubRefusal {
    const subs: Subscription[] = [];
    for (const spec of specs) {
      const owner = spec.org ?? tenantId;
      if (spec.record !== undefined) {
        subs.push({ id: spec.id ?? newId("sub"), collection: spec.collection, filter: null, record: spec.record, matcher: null, from: 0, owner });
        continue;
      }
      const text = spec.filter ?? "";
      if (text.length > cfg.maxFilterBytes) {
        return { refused: { code: "invalid_filter", message: `Invalid filter: the filter is ${text.length} characters long; a subscription's filter holds at most ${cfg.maxFilterBytes} (realtime.maxFilterBytes).` } };
      }
      let conditions;
      try {
        conditions = parseFilter(text);
      } catch (e) {
        return { refused: { code: "invalid_filter", message: (e as Error).message } };
      }
      if (conditions.some((c) => c.op === "$text")) {
        return { refused: { code: "invalid_filter", message: "Invalid filter: $text is not available to realtime subscriptions; subscribe to the collection (or a narrower filter) and search on the client, or list with $text after an event." } };
      }
      subs.push({ id: spec.id ?? newId("sub"), collection: spec.collection, filter: text === "" ? null : text, record: null, matcher: compileMatcher(conditions), from: 0, owner });
    }
    return subs;
  }

  /** Adds subscriptions to a stream of this node; the first ones of a resumed stream start its replay. */
  async function subscribeLocal(s: Stream, specs: SubscriptionSpec[]): Promise<Subscription[] | HubRefusal> {
    if (s.subs.size + specs.length > cfg.maxSubscriptionsPerConnection) {
      return {
        refused: {
          code: "conflict",
          message: `This stream would hold ${s.subs.size + specs.length} subscriptions; a stream holds at most ${cfg.maxSubscriptionsPerConnection} (realtime.maxSubscriptionsPerConnection). Remove some, or use a filter that covers several.`,
        },
      };
    }
    const built = build(specs, s.tenantId);
    if ("refused" in built) return built;
    const ids = built.map((sub) => sub.id);
    const taken = ids.find((id, i) => s.subs.has(id) || ids.indexOf(id) !== i);
    if (taken !== undefined) return { refused: { code: "conflict", message: `This stream already has a subscription ${taken}: give each one its own id, or remove that one first.` } };
    // A new subscription sees what commits from now on; those a resumed stream brings back see everything since its position.
    const from = s.resumeFrom ?? (await core.db.realtime.head());
    for (const sub of built) {
      sub.from = from;
      s.subs.set(sub.id, sub);
      if (sub.owner !== s.tenantId) watchOrg(s, sub.owner);
    }
    if (s.resumeFrom !== undefined) {
      const from = s.resumeFrom;
      s.resumeFrom = undefined;
      await replay(s, from);
    }
    return built;
  }

  function unsubscribeLocal(s: Stream, ids: string[]): string[] {
    return ids.filter((id) => {
      const sub = s.subs.get(id);
      if (sub && sub.owner !== s.tenantId) unwatchOrg(s, sub.owner);
      return s.subs.delete(id);
    });
  }

  /** A tenant's subscription calls reach its own streams; a developer's stream takes none (its subscription is fixed at open). */
  const tenantOwns = (s: Stream, appId: string, tenantId: string) => s.appId === appId && s.tenantId === tenantId && s.developerId === undefined;

  const notFound = (streamId: string): HubRefusal => ({
    refused: { code: "not_found", message: `No open realtime stream ${streamId.slice(0, 80)} of yours: it ended (reconnect and subscribe again) or belongs to another account.` },
  });

  type RemoteAsk = { stream: string; appId: string; tenantId: string } & ({ op: "add"; specs: SubscriptionSpec[] } | { op: "remove"; ids: string[] });
  type RemoteRequest = RemoteAsk & { req: string; from: string };

  /** A subscription request for a stream of this node, sent by the node that received it (PostgreSQL). */
  async function answerRemote(text: string): Promise<void> {
    let r: RemoteRequest;
    try {
      r = JSON.parse(text) as RemoteRequest;
    } catch {
      return;
    }
    const s = streams.get(r.stream);
    if (!s || !tenantOwns(s, r.appId, r.tenantId)) return; // not ours: another node answers, or nobody (the asker times out)
    const answer = r.op === "add" ? await subscribeLocal(s, r.specs) : { removed: unsubscribeLocal(s, r.ids) };
    await core.db.realtime.signal(`rp:${r.req}:${JSON.stringify("refused" in answer ? answer : Array.isArray(answer) ? { added: answer.map(describe) } : answer)}`).catch(() => undefined);
  }

  /** Asks the node holding the stream; undefined when none answers within the time. */
  async function askRemote(request: RemoteAsk): Promise<unknown> {
    if (!changes) return undefined;
    const req = newId("rq");
    const answer = new Promise<unknown>((resolve) => {
      waiting.set(req, resolve);
      setTimeout(() => resolve(undefined), HEARTBEAT_MS).unref();
    });
    const payload = `rq:${JSON.stringify({ ...request, req, from: nodeId })}`;
    // NOTIFY payloads stop at 8000 bytes: a request past that is refused before it is sent.
    if (Buffer.byteLength(payload) > 7900) {
      waiting.delete(req);
      return { refused: { code: "invalid_request", message: "These subscriptions are too large to send at once: send fewer per request." } };
    }
    try {
      await core.db.realtime.signal(payload);
      return await answer;
    } finally {
      waiting.delete(req);
    }
  }

  const describe = (sub: Subscription) => ({ id: sub.id, collection: sub.collection, filter: sub.filter === null ? null : (JSON.parse(sub.filter) as unknown), record: sub.record });

  return {
    wants,
    kick,
    get streamCount() {
      return streams.size;
    },

    /**
     * Opens a stream: its body, or the refusal when a limit is reached. `resume`: the
     * Last-Event-ID position, replayed once the first subscriptions arrive (or `reset`).
     * `initial`: subscriptions the stream starts with (check them first with `check`).
     */
    async open(owner: StreamOwner, lastEventId: string | undefined, initial?: SubscriptionSpec[]): Promise<ReadableStream<Uint8Array> | { limit: string }> {
      let tenantCount = 0;
      for (const s of byTenant.get(tenantKey(owner.appId, owner.tenantId)) ?? []) if (!s.closed && s.developerId === undefined) tenantCount++;
      if (owner.developerId === undefined && tenantCount >= cfg.maxConnectionsPerTenant) {
        return { limit: `This account already has ${tenantCount} realtime streams open here, the most it may (realtime.maxConnectionsPerTenant): share one stream between subscriptions, or close one.` };
      }
      // A developer's views are not the tenant's to count, but are bounded all the same: as many as a tenant's streams.
      const views = owner.developerId === undefined ? 0 : (perDeveloper.get(owner.developerId) ?? 0);
      if (views >= cfg.maxConnectionsPerTenant) {
        return { limit: `You already have ${views} live views open here, the most a developer may (realtime.maxConnectionsPerTenant): close one (a records page in another tab).` };
      }
      if ((perIp.get(owner.ip) ?? 0) >= cfg.maxConnectionsPerIp) {
        return { limit: `This address already has ${perIp.get(owner.ip)} realtime streams open here, the most it may (realtime.maxConnectionsPerIp).` };
      }
      const firstOfApp = !localApps.has(owner.appId);
      const now = core.clock();
      const resume = lastEventId === undefined ? undefined : parsePosition(lastEventId);
      const head = await core.db.realtime.head();
      let resumeFrom: number | undefined;
      let reset: string | undefined;
      if (lastEventId !== undefined) {
        const pruned = resume ? await core.db.realtime.prunedThrough() : 0;
        if (!resume) reset = "Last-Event-ID is not a position this server sent: refetch what you show, then carry on from here.";
        else if (now - resume.at > retentionMs || resume.seq < pruned) reset = `Last-Event-ID is older than the resume window (${cfg.retentionSeconds} s): refetch what you show, then carry on from here.`;
        else if (resume.seq > head) reset = "Last-Event-ID is ahead of this server's feed (was the store replaced?): refetch what you show, then carry on from here.";
        else resumeFrom = resume.seq;
      }
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const s: Stream = {
        ...owner,
        id: newId("rts"),
        subs: new Map(),
        orgs: new Map(),
        position: resumeFrom ?? head,
        resumeFrom,
        pending: undefined,
        closed: false,
        send(text) {
          if (s.closed) return;
          controller.enqueue(encoder.encode(text));
          // The client reads slower than events come: end the stream instead of holding more.
          if ((controller.desiredSize ?? 0) < 0) {
            s.end(`event: dropped\ndata: {"reason":"slow_client","message":"The client read too slowly and fell more than ${cfg.maxBufferedBytes} bytes behind: reconnect with Last-Event-ID to resume."}\n\n`);
          }
        },
        end(text) {
          if (s.closed) return;
          s.closed = true;
          try {
            if (text) controller.enqueue(encoder.encode(text));
            controller.close();
          } catch {
            // already cancelled by the client
          }
          removeStream(s);
        },
      };
      const body = new ReadableStream<Uint8Array>(
        {
          start(c) {
            controller = c;
          },
          cancel() {
            s.closed = true;
            removeStream(s);
          },
        },
        { highWaterMark: cfg.maxBufferedBytes, size: (chunk) => chunk.byteLength },
      );
      addStreamToMaps(s);
      start();
      if (stale) kick();
      if (firstOfApp) await announce(owner.appId).catch(() => undefined);
      s.send(`retry: 1000\nid: ${positionId(s.position, now)}\nevent: ready\ndata: ${JSON.stringify({ stream: s.id, resumed: resumeFrom !== undefined })}\n\n`);
      if (reset) s.send(`id: ${positionId(head, now)}\nevent: reset\ndata: ${JSON.stringify({ message: reset })}\n\n`);
      if (initial) {
        const added = await subscribeLocal(s, initial);
        if ("refused" in added) s.end(`event: ended\ndata: ${JSON.stringify({ reason: added.refused.code, message: added.refused.message })}\n\n`);
      }
      return body;
    },

    /** The refusal of these subscriptions, if any, before a stream is opened with them. */
    check(specs: SubscriptionSpec[]): HubRefusal | undefined {
      const built = build(specs, ""); // only checked: whose records does not matter here
      return "refused" in built ? built : undefined;
    },

    /** Adds subscriptions to a stream of the tenant on any node. */
    async subscribe(appId: string, tenantId: string, streamId: string, specs: SubscriptionSpec[]): Promise<ReturnType<typeof describe>[] | HubRefusal> {
      const built = build(specs, tenantId); // checked here too: bad input is answered without asking other nodes
      if ("refused" in built) return built;
      const s = streams.get(streamId);
      if (s) {
        if (!tenantOwns(s, appId, tenantId)) return notFound(streamId);
        const added = await subscribeLocal(s, specs);
        return "refused" in added ? added : added.map(describe);
      }
      const answer = (await askRemote({ op: "add", stream: streamId, appId, tenantId, specs })) as { added: ReturnType<typeof describe>[] } | HubRefusal | undefined;
      if (!answer) return notFound(streamId);
      return "refused" in answer ? answer : answer.added;
    },

    async unsubscribe(appId: string, tenantId: string, streamId: string, ids: string[]): Promise<string[] | HubRefusal> {
      const s = streams.get(streamId);
      if (s) return tenantOwns(s, appId, tenantId) ? unsubscribeLocal(s, ids) : notFound(streamId);
      const answer = (await askRemote({ op: "remove", stream: streamId, appId, tenantId, ids })) as { removed: string[] } | undefined;
      return answer ? answer.removed : notFound(streamId);
    },

    /** A tenant event (subscription, entitlements, family, invites) to every stream of the tenant, through the feed. */
    async tenantEvent(appId: string, tenantId: string, type: string, data: Record<string, unknown>): Promise<void> {
      if (!wants(appId)) return;
      try {
        await core.db.realtime.append({ appId, tenantId, kind: type, collection: null, recordId: null, data: JSON.stringify(data), before: null, at: core.clock() });
        kick();
      } catch (e) {
        core.log.warn("realtime: recording a tenant event failed", { error: e, type });
      }
    },

    /** An organization changed on this node (members, roles, deletion): its subscribers are checked again before the change is answered. */
    orgChanged: (appId: string, orgId: string): Promise<void> => checkOrgAccess({ appId, orgId }),

    /** Ends every stream (the server closes); clients reconnect elsewhere and resume. */
    close(): void {
      closed = true;
      for (const s of [...streams.values()]) s.end(`event: closing\ndata: {"message":"The server is shutting down: reconnect with Last-Event-ID."}\n\n`);
      stop();
    },
  };
}
