import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow, DeliveryRow, DeliveryStatus } from "../db/types.ts";
import { toIso } from "../clock.ts";
import { fail } from "../errors.ts";
import { BODY_RETENTION_DAYS, DAY } from "./retention.ts";

const wholeNumber = (min: number, max: number, dflt: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, "must be a whole number"),
      v.transform(Number),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    String(dflt),
  );

export const DeliveryListQuery = v.object({
  limit: wholeNumber(1, 1000, 50),
  offset: wholeNumber(0, Number.MAX_SAFE_INTEGER, 0),
  status: v.optional(v.picklist(["sending", "delivered", "failed", "invalid_config"], "must be sending, delivered, failed or invalid_config")),
  event: v.optional(v.pipe(v.string("must appear once"), v.maxLength(100, "must be at most 100 characters"))),
});

export const toPublicDelivery = (d: DeliveryRow) => ({
  id: d.id,
  event: d.event,
  tenantId: d.tenantId,
  status: d.status,
  url: d.url,
  statusCode: d.statusCode,
  error: d.error,
  durationMs: d.durationMs,
  createdAt: toIso(d.createdAt)!,
  finishedAt: toIso(d.finishedAt),
});

export type PublicDelivery = ReturnType<typeof toPublicDelivery>;

/** The delivery log, newest event first, plus how many events still wait in the queue. */
export async function listDeliveries(core: Core, app: AppRow, page: { limit: number; offset: number; status?: DeliveryStatus; event?: string }) {
  const { deliveries, total } = await core.db.admin.deliveries(app.id, page.status, page.limit, page.offset, page.event || undefined);
  return { deliveries: deliveries.map(toPublicDelivery), total, queued: await core.db.webhooks.queuedCount(app.id), limit: page.limit, offset: page.offset };
}

/**
 * One delivery with the body it sent: the exact JSON text that was signed, so a receiver's
 * `x-service-signature` can be checked against it. Kept out of the list on purpose: bodies
 * carry the tenant's email (and, for a resend, a verification token), are stored sealed, and
 * are read one at a time when an operator opens a delivery, not for every row of a page.
 */
export async function getDelivery(core: Core, app: AppRow, id: string) {
  const d = await core.db.webhooks.findDelivery(app.id, id);
  if (!d) throw fail("not_found", `No delivery ${id} in this app's log (deliveries are kept for a limited time; list them with GET /api/v1/admin/apps/${app.id}/webhook-deliveries).`);
  return {
    ...toPublicDelivery(d),
    body: d.bodySealed === null ? null : core.secrets.open(d.bodySealed),
    bodyNote: d.bodySealed !== null ? null : bodyNote(d, core.clock()),
  };
}

/** Why a delivery shows no body, in words for the operator. */
function bodyNote(d: DeliveryRow, now: number): string {
  if (d.status === "sending") return "The delivery is in flight; its body is stored when it finishes.";
  if (now - d.createdAt > BODY_RETENTION_DAYS * DAY) return `Bodies are kept for ${BODY_RETENTION_DAYS} days; this one has been removed.`;
  return "No body was recorded: the delivery stopped before its body was built, or it predates tenantd keeping bodies.";
}
