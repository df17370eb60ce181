import { describe, expect, it, vi } from "vitest";
import type { RealtimeEvent } from "../src/client/index.ts";
import { clientBackend, PASSWORD } from "./client-helpers.ts";

type Todo = { title: string; done: boolean };

describe("tenantd/client realtime", () => {
  it("collection.subscribe and subscribeRecord share one stream, and stop when unsubscribed", async () => {
    const { t, client } = await clientBackend();
    const streams: string[] = [];
    const c = client({
      fetch: (input, init) => {
        if (String(input).includes("/api/v1/realtime?") || String(input).endsWith("/api/v1/realtime")) streams.push(String(input));
        return fetch(input, init);
      },
    });
    await c.auth.signUp({ email: "live@example.com", password: PASSWORD });
    const todos = c.collection<Todo>("todos");
    const open: RealtimeEvent<Todo>[] = [];
    const one: RealtimeEvent<Todo>[] = [];
    const stopOpen = todos.subscribe({ done: false }, (e) => open.push(e));
    const first = await todos.create({ title: "milk", done: true });
    const stopOne = todos.subscribeRecord(first.id, (e) => one.push(e));
    // Both subscriptions are on the server once a write shows up on each.
    await vi.waitFor(async () => {
      await todos.update(first.id, { title: `milk ${Date.now()}` });
      expect(one.length).toBeGreaterThan(0);
    }, { timeout: 5000, interval: 200 });
    const second = await todos.create({ title: "bread", done: false });
    await vi.waitFor(() => expect(open.some((e) => e.type === "created" && e.id === second.id)).toBe(true));
    const created = open.find((e) => e.type === "created")!;
    expect(created).toEqual({ type: "created", collection: "todos", id: second.id, record: second });
    await todos.update(second.id, { done: true });
    await vi.waitFor(() => expect(open.at(-1)).toEqual({ type: "left", collection: "todos", id: second.id }));
    expect(streams).toHaveLength(1);

    stopOpen();
    stopOne();
    await new Promise((r) => setTimeout(r, 200));
    const before = open.length + one.length;
    await todos.create({ title: "after", done: false });
    await todos.update(first.id, { done: false });
    await new Promise((r) => setTimeout(r, 1200));
    expect(open.length + one.length).toBe(before);
    expect(t.backend.core.realtime!.streamCount).toBe(0);
  });

  it("reconnects after the stream breaks and resumes: every change once, in order", async () => {
    const { client } = await clientBackend();
    // The network under the stream: cut() breaks the one open now, as a dropped connection would.
    let cut: (() => void) | undefined;
    let connects = 0;
    const c = client({
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (!new URL(String(input)).pathname.endsWith("/api/v1/realtime") || !res.body) return res;
        connects++;
        const reader = res.body.getReader();
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            cut = () => {
              controller.error(new Error("connection reset"));
              void reader.cancel();
            };
          },
          async pull(controller) {
            const { value, done } = await reader.read();
            if (done) controller.close();
            else controller.enqueue(value);
          },
          cancel: (reason) => reader.cancel(reason),
        });
        return new Response(body, { status: res.status, headers: res.headers });
      },
    });
    await c.auth.signUp({ email: "resume@example.com", password: PASSWORD });
    const notes = c.collection<{ n: number }>("notes");
    const seen: number[] = [];
    notes.subscribe({}, (e) => {
      if (e.type === "created") seen.push(e.record.data.n);
    });
    await vi.waitFor(async () => {
      if (seen.length === 0) await notes.create({ n: 0 });
      expect(seen.length).toBeGreaterThan(0);
    }, { timeout: 5000, interval: 300 });
    const base = seen.length;
    const writes = (async () => {
      for (let n = 1; n <= 20; n++) await notes.create({ n: 100 + n });
    })();
    await new Promise((r) => setTimeout(r, 30));
    cut!();
    await writes;
    await vi.waitFor(() => expect(seen.length).toBe(base + 20), { timeout: 10_000, interval: 100 });
    expect(seen.slice(base)).toEqual(Array.from({ length: 20 }, (_, i) => 101 + i));
    expect(connects).toBe(2);
    c.realtime.close();
  });
});
