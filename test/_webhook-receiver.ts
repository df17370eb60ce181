import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, vi } from "vitest";
import type { TestBackend } from "./_helpers.ts";

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

type Answer = (req: IncomingMessage, res: ServerResponse, raw: Buffer) => void;

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

/** A real HTTP receiver on a free loopback port; answers 200 unless told otherwise. */
export async function startReceiver(answer: Answer = (_req, res) => res.end("ok")) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      received.push({ method: req.method!, path: req.url!, headers: req.headers, raw });
      answer(req, res, raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  servers.push({ close });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/tenantd?src=test`, received, server };
}

/** Points the app's webhook at `url` through the admin API; returns the signing secret. */
export async function configureWebhook(t: TestBackend, developer: string, url: string, appId = t.app.id): Promise<string> {
  const res = await t.request("PUT", `/api/v1/admin/apps/${appId}/event-webhook-config`, { developer, body: { url } });
  expect(res.status, res.text).toBe(200);
  return res.body.secret as string;
}

/** Waits until the app's log holds `n` finished deliveries; returns the log, newest first. */
export async function finishedDeliveries(t: TestBackend, developer: string, n: number, appId = t.app.id) {
  return vi.waitFor(
    async () => {
      const res = await t.request("GET", `/api/v1/admin/apps/${appId}/webhook-deliveries`, { developer });
      const done = (res.body.deliveries as { status: string }[]).filter((d) => d.status !== "sending");
      if (done.length < n || res.body.queued !== 0) throw new Error(`waiting for ${n} deliveries: ${res.text}`);
      return res.body.deliveries as Record<string, any>[];
    },
    { timeout: 10_000, interval: 20 },
  );
}
