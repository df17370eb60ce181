import type { Core } from "../core.ts";
import type { AppRow, DevSessionRow, PlanRow } from "../db/types.ts";
import { hashToken, newId, newToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { addInterval } from "./periods.ts";
import { providerSubscription, toSubscription } from "./effective.ts";
import { writeOrgProviderSubscription } from "./stripe-sync.ts";
import type { Subscription } from "../types/resources.ts";

/** The organization a page is for, with the seats its checkout buys; absent for a tenant's own. */
export interface DevOrg {
  orgId: string;
  seats: number;
}
import { escapeHtml } from "../tools/html.ts";

/** Pages of the development provider live here; tokens in their URLs are valid this long. */
export const DEV_PAGE_PATH = "/api/v1/public/billing/dev";
export const DEV_SESSION_TTL_MS = 60 * 60 * 1000;

async function newDevSession(core: Core, s: { kind: "checkout" | "portal"; app: AppRow; tenantId: string; planId: string | null; successUrl: string; cancelUrl: string; org?: DevOrg }): Promise<{ url: string }> {
  const token = newToken();
  const now = core.clock();
  await core.db.billing.insertDevSession({
    tokenHash: hashToken(token),
    kind: s.kind,
    appId: s.app.id,
    tenantId: s.tenantId,
    planId: s.planId,
    successUrl: s.successUrl,
    cancelUrl: s.cancelUrl,
    now,
    expiresAt: now + DEV_SESSION_TTL_MS,
    orgId: s.org?.orgId ?? null,
    seats: s.org?.seats ?? null,
  });
  return { url: `${core.config.publicUrl}${DEV_PAGE_PATH}/${s.kind}/${token}` };
}

export function createDevCheckout(core: Core, app: AppRow, tenantId: string, plan: PlanRow, successUrl: string, cancelUrl: string, org?: DevOrg) {
  // Said on every checkout: an app that went live without Stripe keys gives its plans away.
  core.log.warn("development billing provider: this checkout takes no payment; set settings.billing.stripeSecretKey to use Stripe", { app: app.id, plan: plan.id });
  return newDevSession(core, { kind: "checkout", app, tenantId, planId: plan.id, successUrl, cancelUrl, org });
}

export function createDevPortal(core: Core, app: AppRow, tenantId: string, returnUrl: string, org?: DevOrg) {
  return newDevSession(core, { kind: "portal", app, tenantId, planId: null, successUrl: returnUrl, cancelUrl: returnUrl, org });
}

/** The provider subscription a page manages: the organization's when it names one, else the tenant's. */
async function sessionSubscription(core: Core, app: AppRow, session: DevSessionRow): Promise<Subscription | null> {
  if (session.orgId === null) return providerSubscription(core, app, session.tenantId);
  const row = (await core.db.orgBilling.subscriptions(app.id, session.orgId)).find((r) => r.source === "billing_provider");
  const plan = row && (await core.db.billing.findPlan(app.id, row.planId));
  return row && plan ? toSubscription(row, plan, core.clock()) : null;
}

/** The live session behind a page token: unknown is 404, expired or already used 410. */
async function requireSession(core: Core, token: string, kind: "checkout" | "portal"): Promise<{ session: DevSessionRow; app: AppRow }> {
  const session = await core.db.billing.findDevSession(hashToken(token));
  const app = session && (await core.db.apps.findById(session.appId));
  if (!session || session.kind !== kind || !app) throw fail("not_found", "This development billing page does not exist. Start again from the app.");
  if (session.expiresAt <= core.clock()) throw fail("gone", "This development billing page has expired. Start again from the app.");
  if (session.usedAt !== null) throw fail("gone", "This checkout was already completed or canceled. Start again from the app.");
  return { session, app };
}

const money = (p: PlanRow) => `${(p.priceCents / 100).toFixed(2)} ${p.currency.toUpperCase()} / ${p.interval}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} (development)</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}
.dev{background:#fff3cd;border:1px solid #e0b800;padding:.75rem;border-radius:.4rem}
button{font-size:1rem;padding:.5rem 1rem;margin-right:.5rem}</style></head>
<body><p class="dev" role="alert"><strong>Development billing — not a real payment.</strong> This page is served by tenantd's development provider because the app has no Stripe keys. No money moves.</p>
<h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}

const button = (action: string, label: string) => `<form method="post"><input type="hidden" name="action" value="${action}"><button type="submit">${escapeHtml(label)}</button></form>`;

export async function renderCheckoutPage(core: Core, token: string): Promise<string> {
  const { session, app } = await requireSession(core, token, "checkout");
  const plan = await core.db.billing.findPlan(app.id, session.planId ?? "");
  if (!plan) throw fail("not_found", "The plan of this checkout no longer exists.");
  return page(`Subscribe to ${plan.name}`, `<p>App: ${escapeHtml(app.name)}</p>
<p>Plan: <strong>${escapeHtml(plan.name)}</strong> — ${escapeHtml(money(plan))}</p>
${plan.description ? `<p>${escapeHtml(plan.description)}</p>` : ""}
${button("confirm", "Confirm subscription")}${button("cancel", "Cancel")}`);
}

/** Confirm activates the subscription; either answer uses the page up. Returns where to go next. */
export async function completeCheckout(core: Core, token: string, action: string): Promise<string> {
  const { session, app } = await requireSession(core, token, "checkout");
  if (action !== "confirm" && action !== "cancel") throw fail("invalid_request", "action must be confirm or cancel.");
  const plan = await core.db.billing.findPlan(app.id, session.planId ?? "");
  if (!plan) throw fail("not_found", "The plan of this checkout no longer exists.");
  const now = core.clock();
  if (!(await core.db.billing.consumeDevSession(hashToken(token), now))) throw fail("gone", "This checkout was already completed or canceled. Start again from the app.");
  if (action === "cancel") return session.cancelUrl;
  if (session.orgId !== null) {
    if (!(await core.db.orgs.byId(app.id, session.orgId))) throw fail("not_found", "The organization of this checkout no longer exists.");
    await writeOrgProviderSubscription(core, app, {
      appId: app.id, orgId: session.orgId, planId: plan.id, status: "active", provider: "dev", providerSubscriptionId: newId("devsub"),
      currentPeriodEnd: addInterval(now, plan.interval), cancelAtPeriodEnd: false, seats: session.seats ?? 1, now,
    });
    return session.successUrl;
  }
  await core.db.billing.upsertProviderSubscription({
    appId: app.id,
    tenantId: session.tenantId,
    planId: plan.id,
    status: "active",
    provider: "dev",
    providerSubscriptionId: newId("devsub"),
    currentPeriodEnd: addInterval(now, plan.interval),
    cancelAtPeriodEnd: false,
    now,
  });
  await core.hooks.emit("billing.subscriptionChanged", { app, tenantId: session.tenantId, planId: plan.id, status: "active", provider: "dev" });
  return session.successUrl;
}

export async function renderPortalPage(core: Core, token: string): Promise<string> {
  const { session, app } = await requireSession(core, token, "portal");
  const sub = await sessionSubscription(core, app, session);
  const back = `<p><a href="${escapeHtml(session.successUrl)}">Back to ${escapeHtml(app.name)}</a></p>`;
  if (!sub) return page("Your subscription", `<p>No paid subscription.</p>${back}`);
  const ends = sub.currentPeriodEnd ? new Date(sub.currentPeriodEnd).toUTCString() : "—";
  const state = sub.status === "canceled" ? "Canceled." : sub.cancelAtPeriodEnd ? `Cancels at the end of the period (${ends}).` : `Renews on ${ends}.`;
  const action = sub.status === "canceled" ? "" : sub.cancelAtPeriodEnd ? button("resume", "Resume subscription") : button("cancel", "Cancel at period end");
  return page("Your subscription", `<p>Plan: <strong>${escapeHtml(sub.planName)}</strong> (${escapeHtml(sub.status)})</p><p>${escapeHtml(state)}</p>${action}${back}`);
}

/** Cancel at period end or resume; the portal page stays usable until it expires. */
export async function portalAction(core: Core, token: string, action: string): Promise<void> {
  const { session, app } = await requireSession(core, token, "portal");
  if (action !== "cancel" && action !== "resume") throw fail("invalid_request", "action must be cancel or resume.");
  const sub = await sessionSubscription(core, app, session);
  if (!sub || sub.status === "canceled") throw fail("conflict", "There is no running subscription to change.");
  if (session.orgId !== null) await core.db.orgBilling.setDevCancelAtPeriodEnd(app.id, session.orgId, action === "cancel", core.clock());
  else await core.db.billing.setDevCancelAtPeriodEnd(app.id, session.tenantId, action === "cancel", core.clock());
}
