import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { OrgSubscriptionRow } from "../db/org-billing-types.ts";
import { fail } from "../errors.ts";
import { providerState } from "../billing/effective.ts";
import { callStripe, requireStripe } from "../billing/stripe.ts";
import { serialize, storeStripeSubscription, writeOrgProviderSubscription } from "../billing/stripe-sync.ts";

/**
 * The seats of an organization. `limit` is what replies show; `enforced` what a join or an
 * email invite is checked against (null: none). With an entitling paid subscription both are
 * its quantity, except with `settings.orgs.seatBilling: "auto"`, where a join buys its seat;
 * without one, the app's `settings.orgs.seats`.
 */
export interface OrgSeatPolicy {
  limit: number | null;
  enforced: number | null;
  paid: boolean;
}

export async function providerRowOf(core: Core, app: AppRow, orgId: string): Promise<OrgSubscriptionRow | undefined> {
  return (await core.db.orgBilling.subscriptions(app.id, orgId)).find((r) => r.source === "billing_provider");
}

/** The organization's provider subscription while it grants its seats. */
export async function paidSubscription(core: Core, app: AppRow, orgId: string): Promise<(OrgSubscriptionRow & { seats: number }) | null> {
  const row = await providerRowOf(core, app, orgId);
  if (!row || row.seats === null || !providerState(row, core.clock()).entitles) return null;
  return { ...row, seats: row.seats };
}

export async function orgSeatPolicy(core: Core, app: AppRow, orgId: string): Promise<OrgSeatPolicy> {
  const paid = await paidSubscription(core, app, orgId);
  if (!paid) {
    const limit = app.settings.orgs.seats ?? null;
    return { limit, enforced: limit, paid: false };
  }
  return { limit: paid.seats, enforced: app.settings.orgs.seatBilling === "auto" ? null : paid.seats, paid: true };
}

/** Every paid seat is taken: 402, since buying seats is the way on. */
export function paidSeatsFull(seats: number, first: string) {
  return fail(
    "limit_reached",
    `All ${seats} paid seats of this organization are taken (seats). ${first}${first ? "a" : "A"} member with the billing.manage permission adds seats (PUT /api/v1/orgs/{orgId}/billing/seats or the billing portal).`,
  );
}

/**
 * Sets the paid seats: Stripe's subscription quantity (its first item), then the stored row
 * from Stripe's answer; a development subscription is changed in place.
 */
export async function pushSeats(core: Core, app: AppRow, row: OrgSubscriptionRow, seats: number): Promise<void> {
  const id = row.providerSubscriptionId!;
  if (row.provider === "dev") {
    await writeOrgProviderSubscription(core, app, {
      appId: app.id, orgId: row.orgId, planId: row.planId, status: row.status, provider: "dev", providerSubscriptionId: id,
      currentPeriodEnd: row.currentPeriodEnd, cancelAtPeriodEnd: row.cancelAtPeriodEnd, seats, now: core.clock(),
    });
    return;
  }
  const stripe = requireStripe(core, app);
  // In the subscription's queue: a Stripe event re-read meanwhile cannot store an older quantity after this one.
  await serialize(`${app.id}:${id}`, async () => {
    const sub = await callStripe(core, "read the subscription", () => stripe.subscriptions.retrieve(id));
    const item = sub.items.data[0];
    if (!item) throw fail("provider_error", "The organization's Stripe subscription has no item to set the seats on.");
    const updated = await callStripe(core, "change the seats", () => stripe.subscriptions.update(id, { items: [{ id: item.id, quantity: seats }] }));
    await storeStripeSubscription(core, app, updated, { orgId: row.orgId });
  });
}

/**
 * With `seatBilling: "auto"`, after a join or a leave: the paid quantity becomes the member
 * count (at least 1). The membership change already happened; when Stripe cannot be reached
 * it is logged, and the next change (or PUT …/billing/seats) sets the quantity again.
 */
export async function syncAutoSeats(core: Core, app: AppRow, orgId: string): Promise<void> {
  if (app.settings.orgs.seatBilling !== "auto") return;
  const paid = await paidSubscription(core, app, orgId);
  if (!paid) return;
  const { members } = await core.db.orgs.seatCounts(app.id, orgId, core.clock());
  const want = Math.max(1, members);
  if (want === paid.seats) return;
  try {
    await pushSeats(core, app, paid, want);
  } catch (e) {
    core.log.error("the organization's paid seats could not follow its members; the next membership change retries", { app: app.id, org: orgId, seats: want, error: e instanceof Error ? e.message : String(e) });
  }
}
