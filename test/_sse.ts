import { afterThisTest } from "./_helpers.ts";

/** One server-sent event as a client reads it: `id` is the last event id at its dispatch. */
export interface SseEvent {
  event: string;
  id: string;
  data: any;
}

export interface SseClient {
  status: number;
  headers: Headers;
  /** every event so far, in order (comments left out) */
  events: SseEvent[];
  /** the last id seen, keep-alive ids included (what EventSource would send as Last-Event-ID) */
  lastEventId: string;
  /** comment lines seen (keep-alives) */
  comments: number;
  /** resolves when the server ended the stream */
  ended: Promise<void>;
  /** the next event (after those already taken by next) that passes `test`, within `ms` */
  next(test?: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
  /** waits until `count` events passing `test` arrived in total */
  collect(count: number, test?: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent[]>;
  close(): void;
}

/**
 * A real SSE reader over fetch, parsing the stream as the WHATWG EventSource does (id,
 * event, data, comments; an id-only block moves the last event id without an event).
 * Closed after the test.
 */
export async function openSse(url: string, headers: Record<string, string> = {}, opts: { read?: boolean } = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  let taken = 0;
  let done = false;
  const client: SseClient = {
    status: res.status,
    headers: res.headers,
    events,
    lastEventId: headers["last-event-id"] ?? "",
    comments: 0,
    ended: Promise.resolve(),
    async next(test = () => true, ms = 5000) {
      const deadline = Date.now() + ms;
      for (;;) {
        while (taken < events.length) {
          const e = events[taken++]!;
          if (test(e)) return e;
        }
        if (done) throw new Error(`stream ended without the event; got ${JSON.stringify(events.map((e) => e.event))}`);
        if (Date.now() > deadline) throw new Error(`no matching event within ${ms} ms; got ${JSON.stringify(events.map((e) => [e.event, e.data]))}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    async collect(count, test = () => true, ms = 5000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const got = events.filter(test);
        if (got.length >= count) return got;
        if (done || Date.now() > deadline) throw new Error(`only ${got.length} of ${count} events; got ${JSON.stringify(events.map((e) => e.event))}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    close: () => abort.abort(),
  };
  afterThisTest(() => abort.abort());
  if (res.status !== 200 || !res.body || opts.read === false) {
    if (res.status !== 200) {
      const text = await res.text();
      events.push({ event: "error", id: "", data: text ? JSON.parse(text) : undefined });
    }
    done = true;
    return client;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  client.ended = (async () => {
    let buffer = "";
    let data: string[] = [];
    let event = "";
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buffer += decoder.decode(value, { stream: true });
        let at: number;
        while ((at = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, at);
          buffer = buffer.slice(at + 1);
          if (line === "") {
            if (data.length > 0) {
              events.push({ event: event || "message", id: client.lastEventId, data: JSON.parse(data.join("\n")) });
              for (const w of waiters.splice(0)) w();
            }
            data = [];
            event = "";
          } else if (line.startsWith(":")) client.comments++;
          else {
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "id") client.lastEventId = value;
            else if (field === "event") event = value;
            else if (field === "data") data.push(value);
          }
        }
      }
    } catch {
      // aborted
    } finally {
      done = true;
      for (const w of waiters.splice(0)) w();
    }
  })();
  return client;
}

/**
 * A client that reads a stream up to its `ready` event, then stops reading (a raw socket,
 * paused). `rest()` reads on and resolves with everything after, once the server closed it.
 */
export async function stalledSse(base: string, path: string, headers: Record<string, string> = {}): Promise<{ received: string; rest(): Promise<string> }> {
  const { connect } = await import("node:net");
  const u = new URL(base);
  const socket = connect(Number(u.port), u.hostname);
  afterThisTest(() => socket.destroy());
  let received = "";
  await new Promise<void>((resolve) => {
    const onData = (d: Buffer) => {
      received += d.toString();
      if (received.includes("event: ready")) {
        socket.off("data", onData);
        resolve();
      }
    };
    socket.on("data", onData);
    const lines = Object.entries({ host: u.host, accept: "text/event-stream", ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`GET ${path} HTTP/1.1\r\n${lines.join("")}\r\n`);
  });
  socket.pause();
  const rest = () =>
    new Promise<string>((resolve) => {
      let all = "";
      socket.on("data", (d) => (all += d.toString()));
      socket.on("end", () => resolve(all));
      socket.on("close", () => resolve(all));
      socket.resume();
    });
  return { received, rest };
}
