import { createServer } from "node:http";
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { verifyWebhook } from "tenantd/webhooks";
import { createReplayGuard } from "./verify.mjs";

/** @typedef {import("./verify.mjs").TenantdEvent} TenantdEvent */

/** Reads the raw body, or null past `limit` bytes. */
async function readRaw(/** @type {import("node:http").IncomingMessage} */ req, /** @type {number} */ limit) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * A tenantd webhook receiver on node:http: raw body, verify the signature, refuse replays,
 * then dispatch by event name. Answer fast (tenantd waits 1.5 s): queue slow work.
 *
 * @param {{ secret: string, handlers: Partial<Record<string, (event: TenantdEvent) => unknown>>, now?: () => number, maxBodyBytes?: number }} opts
 */
export function createReceiver(opts) {
  const now = opts.now ?? Date.now;
  const replays = createReplayGuard();
  return createServer(async (req, res) => {
    const reply = (/** @type {number} */ status, /** @type {object} */ body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST") return reply(405, { error: "method_not_allowed" });
    const raw = await readRaw(req, opts.maxBodyBytes ?? 1024 * 1024);
    if (raw === null) return reply(413, { error: "payload_too_large" });

    const result = await verifyWebhook(raw, req.headers, opts.secret, { now: now() });
    if (!result.ok) return reply(401, { error: result.error });
    if (!replays.firstSight(result.signature, result.event.timestamp, now())) return reply(409, { error: "replayed" });

    const handler = opts.handlers[result.event.event];
    // New event types are added over time: an unknown one is a no-op, not an error.
    if (!handler) return reply(200, { ignored: true });
    try {
      await handler(result.event);
      reply(200, { ok: true });
    } catch (e) {
      console.error("webhook handler failed", e);
      reply(500, { error: "handler_failed" });
    }
  });
}

// Run directly: WEBHOOK_SECRET=whsec_… PORT=4000 node examples/webhook-receiver/server.mjs
// (real paths on both sides: under pnpm or npm link, node_modules/tenantd is a symlink)
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error("Set WEBHOOK_SECRET to the signing secret tenantd printed (tenantd webhook set / rotate).");
    process.exit(1);
  }
  const server = createReceiver({
    secret,
    handlers: {
      "tenant.deleted": (e) => console.log(`tenant ${e.tenantId} (${e.email}) deleted: ${String(e.payload.reason)}`),
      "tenant.email.resend_verification": (e) => console.log(`send a verification email to ${e.email}: ${String(e.payload.verifyUrl)}`),
    },
  });
  const port = Number(process.env.PORT ?? 4000);
  server.listen(port, () => console.log(`webhook receiver on http://localhost:${port}/`));
}
