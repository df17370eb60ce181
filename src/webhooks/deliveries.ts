import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/apps.ts";
import type { DeliveryRow, DeliveryStatus } from "../db/webhooks.ts";
import { toIso } from "../clock.ts";

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
export async function listDeliveries(core: Core, app: AppRow, page: { limit: number; offset: number; status?: DeliveryStatus }) {
  const { deliveries, total } = await core.db.admin.deliveries(app.id, page.status, page.limit, page.offset);
  return { deliveries: deliveries.map(toPublicDelivery), total, queued: await core.db.webhooks.queuedCount(app.id), limit: page.limit, offset: page.offset };
}
