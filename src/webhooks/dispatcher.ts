import type { Core } from "../core.ts";
import type { DeliveryOutcome, QueuedEvent } from "../db/types.ts";
import { onEventQueued } from "./events.ts";
import { postOnce } from "./send.ts";
import { signEnvelope } from "./sign.ts";
import { openAppSecret } from "../apps/settings.ts";

const BATCH = 8;
/** How often the queue is checked for events queued by another process (the CLI). */
export const POLL_MS = 1000;
/** A delivery still `sending` this long after its claim belonged to a process that stopped. */
const STALE_AFTER_MS = 60_000;

export interface Dispatcher {
  /** Schedules a pass over the queue on a later turn of the event loop. */
  kick(): void;
  /** Stops taking events and waits for the deliveries in flight. */
  stop(): Promise<void>;
}

/**
 * Sends queued events. Started by the server only (never the CLI). A pass claims a batch
 * (queue row → `sending` log row, one transaction), sends them concurrently, records each
 * outcome, and repeats until the queue is empty. Claiming before sending makes delivery
 * at most once: an event whose claim committed is never sent again, even after a crash.
 */
export function startDispatcher(core: Core): Dispatcher {
  let stopped = false;
  let scheduled: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  async function deliver(e: QueuedEvent): Promise<DeliveryOutcome> {
    const finishedAt = () => core.clock();
    const config = await core.db.webhooks.findConfig(e.appId);
    const { email, payload } = JSON.parse(core.secrets.open(e.data)) as { email: string | null; payload: Record<string, unknown> };
    const envelope = { event: e.event, timestamp: Math.floor(core.clock() / 1000), appId: e.appId, tenantId: e.tenantId, email, payload };
    if (!config) {
      // Logged with the body it would have carried, so the operator sees what was missed.
      const bodySealed = core.secrets.seal(JSON.stringify(envelope));
      return { status: "invalid_config", url: null, statusCode: null, error: "no webhook URL is configured for this app", durationMs: null, finishedAt: finishedAt(), bodySealed };
    }
    const { body, headers } = signEnvelope(openAppSecret(core.secrets, config.secretSealed, e.appId), envelope);
    const result = await postOnce(config.url, body, headers, core.config.webhooks);
    return {
      status: result.ok ? "delivered" : "failed",
      url: config.url,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      finishedAt: finishedAt(),
      // The very bytes that were signed and sent, so a signature can be re-verified against them.
      bodySealed: core.secrets.seal(body.toString("utf8")),
    };
  }

  async function deliverAndRecord(e: QueuedEvent): Promise<void> {
    let outcome: DeliveryOutcome;
    try {
      outcome = await deliver(e);
    } catch (err) {
      core.log.error("webhook delivery failed unexpectedly", { event: e.event, appId: e.appId, error: err as Error });
      outcome = { status: "failed", url: null, statusCode: null, error: "internal error while preparing the delivery", durationMs: null, finishedAt: core.clock(), bodySealed: null };
    }
    await core.db.webhooks.finish(e.id, outcome);
    core.metrics?.webhookDelivery(outcome.status);
    if (outcome.status !== "delivered") {
      core.log.warn("webhook delivery failed", { event: e.event, appId: e.appId, outcome: outcome.status, statusCode: outcome.statusCode, reason: outcome.error });
    }
  }

  async function pass(): Promise<void> {
    const now = core.clock();
    const swept = await core.db.webhooks.failStale(now - core.config.webhooks.timeoutMs - STALE_AFTER_MS, now, "the server stopped while this delivery was in flight; it was not retried");
    if (swept > 0) core.log.warn("webhook deliveries interrupted by a stop marked failed", { count: swept });
    while (!stopped) {
      const batch = await core.db.webhooks.claim(BATCH, core.clock());
      if (batch.length === 0) break;
      await Promise.all(batch.map(deliverAndRecord));
    }
  }

  function run(): void {
    scheduled = undefined;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((err: unknown) => core.log.error("webhook dispatcher pass failed", { error: err as Error }))
      .finally(() => {
        running = undefined;
        if (again && !stopped) {
          again = false;
          kick();
        }
      });
  }

  function kick(): void {
    if (stopped || scheduled) return;
    // A macrotask later, so the request that raised the event answers first.
    scheduled = setTimeout(run, 0);
  }

  const poll = setInterval(kick, POLL_MS);
  poll.unref();
  onEventQueued(core, kick);
  kick();

  return {
    kick,
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(scheduled);
      onEventQueued(core, undefined);
      await running;
    },
  };
}
