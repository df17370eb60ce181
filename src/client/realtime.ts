import type { Core } from "./core.ts";
import type { Filter } from "./filter.ts";
import type { DataRecord, JsonObject } from "./types.ts";
import { TenantdError } from "./errors.ts";

/**
 * Live record changes over one stream shared by every subscription of the client
 * (docs/realtime.md). The stream is read with fetch, so the bearer goes in a header and it
 * runs wherever fetch streams a body: browsers, Node >= 20, Deno, Bun, React Native with a
 * streaming fetch. It opens with the first subscription and closes with the last. When it
 * breaks it reconnects with its position (Last-Event-ID) and sends its subscriptions again:
 * the server replays what was missed, each change once; past the server's window every
 * handler gets `reset` (refetch what you show).
 */

/** What a subscription's handler receives. */
export type RealtimeEvent<T extends object = JsonObject> =
  /** a record that matches was created, or updated (the record as it now is) */
  | { type: "created" | "updated"; collection: string; id: string; record: DataRecord<T> }
  /** a matching record was deleted, or an update made it stop matching the filter (`left`) */
  | { type: "deleted" | "left"; collection: string; id: string }
  /** events may have been missed (the client was away longer than the server keeps them): refetch */
  | { type: "reset" };

/** A change that concerns the signed-in tenant: `subscription`, `entitlements`, `family`, `invites`. */
export interface TenantEvent {
  type: string;
  data: JsonObject;
}

export type Unsubscribe = () => void;

interface LocalSub {
  id: string;
  spec: { collection: string; filter?: unknown; record?: string };
  handler: (event: RealtimeEvent<any>) => void;
}

/** Reconnect delays: 250 ms doubling to 10 s; a stream that stayed up a while starts over. */
const RETRY = { first: 250, max: 10_000 };

export function realtimeApi(core: Core) {
  const subs = new Map<string, LocalSub>();
  const tenantListeners = new Set<(event: TenantEvent) => void>();
  let nextId = 0;
  let lastEventId: string | undefined;
  let streamId: string | undefined;
  let abort: AbortController | undefined;
  let running = false;
  let retryMs = RETRY.first;

  const call = (fn: () => void) => {
    try {
      fn();
    } catch {
      // One handler that throws must not stop the stream or the other handlers.
    }
  };

  /** Sends subscriptions to the open stream; a failure closes the stream, whose reconnect sends them all again. */
  async function send(list: LocalSub[]): Promise<void> {
    const stream = streamId;
    if (!stream || list.length === 0) return;
    try {
      await core.request("POST", "/api/v1/realtime/subscriptions", { auth: "tenant", body: { stream, subscriptions: list.map((s) => ({ id: s.id, ...s.spec })) } });
    } catch (e) {
      if (e instanceof TenantdError && e.status >= 400 && e.status < 500 && e.code !== "not_found") {
        // The server refused these subscriptions (a bad filter, too many): their handlers never get events.
        for (const s of list) subs.delete(s.id);
        return;
      }
      abort?.abort();
    }
  }

  function dispatch(event: string, data: any): void {
    switch (event) {
      case "ready":
        streamId = data.stream;
        retryMs = RETRY.first;
        void send([...subs.values()]);
        return;
      case "reset":
        for (const s of [...subs.values()]) call(() => s.handler({ type: "reset" }));
        return;
      case "tenant":
        for (const l of [...tenantListeners]) call(() => l(data as TenantEvent));
        return;
      case "created":
      case "updated":
      case "deleted":
      case "left": {
        const base = { collection: data.collection as string, id: data.id as string };
        for (const id of data.subscriptions as string[]) {
          const s = subs.get(id);
          if (s) call(() => s.handler(event === "created" || event === "updated" ? { type: event, ...base, record: data.record } : { type: event, ...base }));
        }
        for (const id of (data.left ?? []) as string[]) {
          const s = subs.get(id);
          if (s) call(() => s.handler({ type: "left", ...base }));
        }
      }
    }
  }

  /** Reads one connection until it ends; true when the session ended (no reconnect). */
  async function connect(): Promise<boolean> {
    abort = new AbortController();
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastEventId) headers["last-event-id"] = lastEventId;
    let res: Response;
    try {
      res = await core.request<Response>("GET", "/api/v1/realtime", { auth: "tenant", headers, raw: true });
    } catch (e) {
      // No session, or it ended: nothing to reconnect with.
      return e instanceof TenantdError && (e.status === 401 || e.status === 403);
    }
    if (!res.body) return false;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let data: string[] = [];
    let event = "";
    const onAbort = () => void reader.cancel().catch(() => undefined);
    abort.signal.addEventListener("abort", onAbort);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return false;
        buffer += decoder.decode(value, { stream: true });
        let at: number;
        while ((at = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, at).replace(/\r$/, "");
          buffer = buffer.slice(at + 1);
          if (line === "") {
            if (data.length > 0) {
              if (event === "ended") return true;
              dispatch(event, JSON.parse(data.join("\n")));
            }
            data = [];
            event = "";
            continue;
          }
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") lastEventId = text;
          else if (field === "event") event = text;
          else if (field === "data") data.push(text);
        }
      }
    } catch {
      return false;
    } finally {
      abort.signal.removeEventListener("abort", onAbort);
      streamId = undefined;
    }
  }

  async function run(): Promise<void> {
    running = true;
    while (subs.size > 0 || tenantListeners.size > 0) {
      if (await connect()) break;
      if (subs.size === 0 && tenantListeners.size === 0) break;
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      retryMs = Math.min(retryMs * 2, RETRY.max);
    }
    running = false;
  }

  function ensureRunning(): void {
    if (!running) void run();
  }

  function add(spec: LocalSub["spec"], handler: LocalSub["handler"]): Unsubscribe {
    const sub: LocalSub = { id: `c${++nextId}`, spec, handler };
    subs.set(sub.id, sub);
    if (streamId) void send([sub]);
    ensureRunning();
    return () => {
      if (!subs.delete(sub.id)) return;
      const stream = streamId;
      if (subs.size === 0 && tenantListeners.size === 0) {
        abort?.abort();
        return;
      }
      if (stream) void core.request("DELETE", "/api/v1/realtime/subscriptions", { auth: "tenant", query: { stream, id: sub.id } }).catch(() => undefined);
    };
  }

  return {
    /** Changes to the records of `collection` that match `filter` (the list filter language; `{}` for all). */
    subscribe: <T extends object = JsonObject>(collection: string, filter: Filter<T> | Record<string, never>, handler: (event: RealtimeEvent<T>) => void): Unsubscribe =>
      add({ collection, ...(Object.keys(filter ?? {}).length > 0 && { filter }) }, handler),
    /** Changes to one record. */
    subscribeRecord: <T extends object = JsonObject>(collection: string, id: string, handler: (event: RealtimeEvent<T>) => void): Unsubscribe => add({ collection, record: id }, handler),
    /** The tenant's own changes (subscription, entitlements, family, invites), on the same stream. */
    onTenantEvent(listener: (event: TenantEvent) => void): Unsubscribe {
      tenantListeners.add(listener);
      ensureRunning();
      return () => {
        tenantListeners.delete(listener);
        if (subs.size === 0 && tenantListeners.size === 0) abort?.abort();
      };
    },
    /** Ends every subscription and the stream. */
    close(): void {
      subs.clear();
      tenantListeners.clear();
      abort?.abort();
    },
  };
}

export type Realtime = ReturnType<typeof realtimeApi>;
