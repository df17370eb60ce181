import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readSettings as parseSettings } from "../src/apps/settings.ts";
import type { AppRow, PlanRow, InviteRow } from "../src/db/types.ts";
import { postgresEngine, sqliteEngine, type Engine, type PortedRepositories } from "./_engines.ts";

/**
 * One scripted history of domain operations, played on SQLite and on PostgreSQL: every
 * answer must be the same on both (the repositories' contract, not either engine's SQL).
 */

const T0 = Date.UTC(2026, 0, 15, 12);
const app = (id: string, key: string, ownerId: string | null): AppRow => ({
  id,
  name: `App ${id}`,
  publishableKey: key,
  secretKeyHash: null,
  ownerId,
  settings: parseSettings({}),
  createdAt: T0,
  updatedAt: T0,
});
const session = (id: string, at: number) => ({ id, refreshHash: `r-${id}`, createdAt: at, expiresAt: at + 90 * 864e5 });
const tenant = (id: string, appId: string, email: string, at: number) => ({
  id,
  appId,
  email,
  passwordHash: "h",
  emailVerifiedAt: null,
  locale: "en",
  parentTenantId: null,
  createdAt: at,
});
const plan = (id: string, appId: string, slug: string, sortOrder: number): PlanRow => ({
  id,
  appId,
  name: slug,
  slug,
  description: null,
  priceCents: 900,
  currency: "usd",
  interval: "month",
  sortOrder,
  entitlements: { seats: 2, export: true, zeta: 1, alpha: false },
  stripeProductId: null,
  stripePriceId: `price_${slug}`,
  archivedAt: null,
  createdAt: T0 + sortOrder,
  updatedAt: T0,
});
const invite = (id: string, appId: string, tenantId: string, hash: string, at: number): InviteRow => ({
  id,
  appId,
  tenantId,
  tokenHash: hash,
  note: `note ${id}`,
  createdAt: at,
  expiresAt: at + 3600_000,
  usedAt: null,
  usedByTenantId: null,
});

/** Plays the history; returns every answer in order. */
async function history(db: PortedRepositories): Promise<unknown[]> {
  const out: unknown[] = [];
  const log = async (label: string, p: Promise<unknown> | unknown) => out.push([label, await p]);

  await log("meta.set", db.meta.set("url", "http://a"));
  await log("meta.set again", db.meta.set("url", "http://b"));
  await log("meta.get", db.meta.get("url"));
  await log("meta.get missing", db.meta.get("nope"));

  await log("dev.insert", db.developers.insert({ id: "dev1", email: "dev@x.io", passwordHash: "ph", createdAt: T0 }));
  await log("dev.byEmail", db.developers.findByEmail("dev@x.io"));
  await log("dev.session", db.developers.createSession("ds1", "dev1", T0, T0 + 1000));
  await log("dev.bySession", db.developers.findBySession("ds1", T0 + 1));
  await log("dev.bySession expired", db.developers.findBySession("ds1", T0 + 1000));
  await log("dev.setPassword", db.developers.setPassword("dev1", "ph2"));
  await log("dev.bySession after password", db.developers.findBySession("ds1", T0 + 1));
  await log("dev.list", db.developers.list());

  await log("apps.insert", db.apps.insert(app("app1", "pk_1", null)));
  await log("apps.insert 2", db.apps.insert(app("app2", "pk_2", "dev1")));
  await log("apps.adopt", db.apps.adoptUnowned("dev1"));
  await log("apps.byKey", db.apps.findByKey("pk_1"));
  await log("apps.update", db.apps.update({ id: "app1", name: "Renamed", publishableKey: "pk_1b", settings: parseSettings({ signupMode: "closed" }), updatedAt: T0 + 5 }));
  await log("apps.byKey old", db.apps.findByKey("pk_1"));
  await log("apps.byId", db.apps.findById("app1"));
  await log("apps.secret", db.apps.setSecretKeyHash("app1", "skh", T0 + 6));
  await log("apps.cached", db.apps.cached());
  await log("apps.list owner", db.apps.list("dev1"));
  await log("apps.count", db.apps.count());

  for (let i = 0; i < 5; i++) await log(`tenants.create ${i}`, db.tenants.createWithSession(tenant(`t${i}`, "app1", `user${i}_%@x.io`, T0 + i), session(`s${i}`, T0 + i)));
  await log("tenants.create other app", db.tenants.createWithSession(tenant("t9", "app2", "user0_%@x.io", T0), session("s9", T0)));
  await log("tenants.list", db.tenants.list("app1", { limit: 3, offset: 1 }));
  await log("tenants.list like escape", db.tenants.list("app1", { emailContains: "3_%", limit: 10, offset: 0 }));
  await log("tenants.list like wildcard", db.tenants.list("app1", { emailContains: "_", limit: 10, offset: 0 }));
  await log("tenants.list created range", db.tenants.list("app1", { createdFrom: T0 + 1, createdBefore: T0 + 3, limit: 10, offset: 0 }));
  await log("tenants.list unverified", db.tenants.list("app1", { verified: false, limit: 10, offset: 0 }));
  await log("tenants.list verified", db.tenants.list("app1", { verified: true, limit: 10, offset: 0 }));
  await log("tenants.byEmail", db.tenants.findByEmail("app1", "user2_%@x.io"));
  await log("tenants.byId other app", db.tenants.findById("app2", "t1"));
  await log("tenants.markVerified", db.tenants.markVerified("t1", T0 + 50));
  await log("tenants.markVerified keeps first", db.tenants.markVerified("t1", T0 + 99));
  await log("tenants.setLocale", db.tenants.setLocale("t1", "nl"));
  await log("tenants.byId", db.tenants.findById("app1", "t1"));

  await log("sessions.state", db.sessions.state("s1"));
  const next = (hash: string, now: number, graceMs = 10_000) => ({ appId: "app1", hash, now, expiresAt: now + 864e5, graceMs });
  await log("sessions.rotate", db.sessions.rotate("r-s1", next("r-s1b", T0 + 10)));
  await log("sessions.rotate other app", db.sessions.rotate("r-s1b", { ...next("x", T0 + 11), appId: "app2" }));
  await log("sessions.rotate within grace", db.sessions.rotate("r-s1", next("r-s1c", T0 + 20)));
  await log("sessions.rotate reuse", db.sessions.rotate("r-s1", next("r-s1d", T0 + 20_000)));
  await log("sessions.rotate ended", db.sessions.rotate("r-s1b", next("r-s1e", T0 + 20_001)));
  await log("sessions.rotate unknown", db.sessions.rotate("nope", next("r-x", T0)));
  await log("sessions.rotate expired", db.sessions.rotate("r-s2", next("r-s2b", T0 + 100 * 864e5)));
  await log("sessions.create", db.sessions.create("t2", "app1", session("s2b", T0 + 30)));
  await log("sessions.end", db.sessions.end("s2b", T0 + 40, "logout"));
  await log("sessions.end again", db.sessions.end("s2b", T0 + 41, "logout"));
  await log("sessions.endAll", db.sessions.endAllForTenant("t3", T0 + 42, "admin"));
  await log("sessions.state ended", db.sessions.state("s3"));
  await log("sessions.purge", db.sessions.purge(T0 + 41));

  await log("email.issue", db.emailTokens.issue({ hash: "ev1", appId: "app1", tenantId: "t2", purpose: "verify", createdAt: T0, expiresAt: T0 + 100 }));
  await log("email.issue replaces", db.emailTokens.issue({ hash: "ev2", appId: "app1", tenantId: "t2", purpose: "verify", createdAt: T0, expiresAt: T0 + 100 }));
  await log("email.check replaced", db.emailTokens.check("ev1", "app1", "verify", T0));
  await log("email.check wrong app", db.emailTokens.check("ev2", "app2", "verify", T0));
  await log("email.verify", db.emailTokens.verifyEmail("ev2", "app1", T0 + 1));
  await log("email.verify again", db.emailTokens.verifyEmail("ev2", "app1", T0 + 2));
  await log("email.issue reset", db.emailTokens.issue({ hash: "er1", appId: "app1", tenantId: "t4", purpose: "reset", createdAt: T0, expiresAt: T0 + 100 }));
  await log("email.reset expired", db.emailTokens.resetPassword("er1", "app1", "newhash", T0 + 100));
  await log("email.issue reset 2", db.emailTokens.issue({ hash: "er2", appId: "app1", tenantId: "t4", purpose: "reset", createdAt: T0, expiresAt: T0 + 100 }));
  await log("email.reset", db.emailTokens.resetPassword("er2", "app1", "newhash", T0 + 3));
  await log("email.reset tenant", db.tenants.findById("app1", "t4"));
  await log("email.reset session", db.sessions.state("s4"));

  await log("outbox.insert", db.outbox.insert({ id: "m1", appId: "app1", tenantId: "t1", kind: "verify", locale: "en", to: "a@x.io", subject: "S", text: "T", html: "<p>", link: null, createdAt: T0 }));
  await log("outbox.insert 2", db.outbox.insert({ id: "m2", appId: "app1", tenantId: null, kind: "reset", locale: "es", to: "b@x.io", subject: "S2", text: "T2", html: "<b>", link: "http://l", createdAt: T0 }));
  await log("outbox.list", db.outbox.list({ appId: "app1", limit: 10 }));
  await log("outbox.list all", db.outbox.list({ limit: 1 }));

  await log("webhooks.setUrl new", db.webhooks.setUrl("app1", "https://h/1", "sealed1", T0));
  await log("webhooks.setUrl update", db.webhooks.setUrl("app1", "https://h/2", "sealed-ignored", T0 + 1));
  await log("webhooks.setSecret", db.webhooks.setSecret("app1", "sealed2", T0 + 2));
  await log("webhooks.setSecret none", db.webhooks.setSecret("app2", "sealed2", T0 + 2));
  await log("webhooks.config", db.webhooks.findConfig("app1"));
  for (let i = 0; i < 4; i++) await log(`webhooks.enqueue ${i}`, db.webhooks.enqueue({ id: `e${i}`, appId: "app1", event: "tenant.created", tenantId: i % 2 ? null : "t1", data: `d${i}`, createdAt: T0 + i }));
  await log("webhooks.queued", db.webhooks.queuedCount("app1"));
  await log("webhooks.claim", db.webhooks.claim(3, T0 + 10));
  await log("webhooks.finish", db.webhooks.finish("e0", { status: "delivered", url: "https://h/2", statusCode: 200, error: null, durationMs: 12, finishedAt: T0 + 11, bodySealed: "sealed-body-e0" }));
  await log("webhooks.failStale", db.webhooks.failStale(T0 + 11, T0 + 12, "stopped"));
  await log("webhooks.deliveries", db.webhooks.listDeliveries("app1", 2, 1));
  await log("webhooks.findDelivery", db.webhooks.findDelivery("app1", "e0"));
  await log("webhooks.findDelivery other app", db.webhooks.findDelivery("app2", "e0"));
  await log("admin.deliveries", db.admin.deliveries("app1", undefined, 10, 0));
  await log("admin.deliveries failed", db.admin.deliveries("app1", "failed", 10, 0));
  await log("webhooks.prune bodies", db.webhooks.prune(T0 + 5, T0 - 1));
  await log("webhooks.findDelivery pruned body", db.webhooks.findDelivery("app1", "e0"));
  await log("webhooks.prune rows", db.webhooks.prune(T0 + 5, T0 + 2));
  await log("webhooks.deliveries pruned", db.webhooks.listDeliveries("app1", 10, 0));
  await log("webhooks.removeConfig", db.webhooks.removeConfig("app1"));

  const file = (id: string, size: number) => ({ id, appId: "app1", tenantId: "t1", pathname: `p/${id}`, sizeBytes: size, mimeType: "image/png", originalFilename: null, sha256: "ab", createdAt: T0 });
  await log("files.insert", db.files.insert(file("f1", 100), 250));
  await log("files.insert 2", db.files.insert(file("f2", 100), 250));
  await log("files.insert over", db.files.insert(file("f3", 100), 250));
  await log("files.insert no quota", db.files.insert(file("f4", 1000), null));
  await log("files.insert tenant gone", db.files.insert({ ...file("f5", 1), tenantId: "ghost" }, 250));
  await log("files.used", db.files.usedBytes("app1", "t1"));
  await log("files.find", db.files.find("app1", "t1", "f1"));
  await log("files.find other tenant", db.files.find("app1", "t2", "f1"));
  await log("files.public", db.files.findPublic("f2"));
  await log("files.remove", db.files.remove("app1", "t1", "f2"));
  await log("files.tenantBlobs", db.files.tenantBlobs("app1", "t1"));
  await log("files.appBlobs", db.files.appBlobs("app1", "f1", 10));
  await log("stats", db.stats.appUsage("app1", T0));
  await log("sessions.beginTenantDeletion", db.sessions.beginTenantDeletion("app1", "t3", T0 + 60));
  await log("sessions.state deleting", db.sessions.state("s3"));
  await log("files.insert tenant deleting", db.files.insert({ ...file("f6", 1), tenantId: "t3" }, null));
  await log("sessions.cancelTenantDeletion", db.sessions.cancelTenantDeletion("app1", "t3"));
  await log("sessions.state deletion cancelled", db.sessions.state("s3"));
  await log("files.insert deletion cancelled", db.files.insert({ ...file("f7", 1), tenantId: "t3" }, null));
  for (const sort of ["createdAt", "-createdAt", "email", "-email"] as const) {
    await log(`admin.searchTenants ${sort}`, db.admin.searchTenants("app1", { sort, limit: 3, offset: 1, now: T0 }));
  }
  await log("admin.searchTenants email", db.admin.searchTenants("app1", { email: "3_%", sort: "email", limit: 10, offset: 0, now: T0 }));
  await log("admin.searchTenants verified", db.admin.searchTenants("app1", { verified: true, createdFrom: T0, createdTo: T0 + 3, sort: "createdAt", limit: 10, offset: 0, now: T0 }));
  await log("admin.tenantSessions", db.admin.tenantSessions("app1", "t1"));
  await log("admin.recordCounts", db.admin.recordCounts("app1", "t1"));
  await log("admin.tenantFileIds", db.admin.tenantFileIds("app1", "t1", 2, 0));

  await log("billing.insertPlan", db.billing.insertPlan(plan("p1", "app1", "pro", 2)));
  await log("billing.insertPlan 2", db.billing.insertPlan(plan("p2", "app1", "basic", 1)));
  await log("billing.updatePlan", db.billing.updatePlan({ ...plan("p2", "app1", "basic", 1), archivedAt: T0 + 1, stripePriceId: "price_pro" }));
  await log("billing.listPlans", db.billing.listPlans("app1", { includeArchived: false }));
  await log("billing.listPlans all", db.billing.listPlans("app1", { includeArchived: true }));
  await log("billing.byPrice", db.billing.findPlanByStripePrice("app1", "price_pro"));
  await log("billing.bySlug", db.billing.findPlanBySlug("app1", "basic"));
  const sub = (id: string, status: string, now: number) => ({ appId: "app1", tenantId: "t1", planId: "p1", status, provider: "stripe" as const, providerSubscriptionId: id, currentPeriodEnd: now + 100, cancelAtPeriodEnd: false, now });
  await log("billing.sub", db.billing.upsertProviderSubscription(sub("sub_1", "active", T0)));
  await log("billing.sub late other", db.billing.upsertProviderSubscription(sub("sub_0", "canceled", T0 + 1)));
  await log("billing.sub same", db.billing.upsertProviderSubscription({ ...sub("sub_1", "past_due", T0 + 2), cancelAtPeriodEnd: true }));
  await log("billing.grant", db.billing.upsertGrant({ appId: "app1", tenantId: "t1", source: "trial", planId: "p2", expiresAt: T0 + 99, now: T0 }));
  await log("billing.grant other app", db.billing.upsertGrant({ appId: "app2", tenantId: "t1", source: "trial", planId: "p1", expiresAt: null, now: T0 + 1 }));
  await log("billing.subscriptions", db.billing.subscriptions("app1", "t1").then((s) => s.sort((a, b) => a.source.localeCompare(b.source))));
  await log("billing.byProvider", db.billing.findByProviderSubscription("app1", "sub_1"));
  await log("billing.devCancel", db.billing.setDevCancelAtPeriodEnd("app1", "t1", true, T0));
  await log("billing.removeSource", db.billing.removeSource("app1", "t1", "trial"));
  await log("billing.customer", db.billing.saveStripeCustomer("app1", "t1", "cus_1", T0));
  await log("billing.customer keeps first", db.billing.saveStripeCustomer("app1", "t1", "cus_2", T0));
  await log("billing.tenantForCustomer", db.billing.tenantForStripeCustomer("app1", "cus_1"));
  await log("billing.event seen before", db.billing.stripeEventSeen("app1", "evt_1"));
  await log("billing.event record", db.billing.recordStripeEvent("app1", "evt_1", "x", T0));
  await log("billing.event record again", db.billing.recordStripeEvent("app1", "evt_1", "x", T0));
  await log("billing.event seen", db.billing.stripeEventSeen("app1", "evt_1"));
  await log("billing.devSession", db.billing.insertDevSession({ tokenHash: "dsh", kind: "checkout", appId: "app1", tenantId: "t1", planId: "p1", successUrl: "s", cancelUrl: "c", now: T0, expiresAt: T0 + 10 }));
  await log("billing.findDevSession", db.billing.findDevSession("dsh"));
  await log("billing.consumeDevSession", db.billing.consumeDevSession("dsh", T0 + 1));
  await log("billing.consumeDevSession again", db.billing.consumeDevSession("dsh", T0 + 2));
  const inc = (featureKey: string, period: string, by: number, limit: number | null) => db.billing.incrementUsage({ appId: "app1", tenantId: "t1", featureKey, period, periodStart: T0, by, limit });
  await log("usage.inc", inc("api", "monthly", 3, 5));
  await log("usage.inc to limit", inc("api", "monthly", 2, 5));
  await log("usage.inc over", inc("api", "monthly", 1, 5));
  await log("usage.inc first over", inc("big", "daily", 9, 5));
  await log("usage.inc unlimited", inc("big", "daily", 9, null));
  await log("usage.get", db.billing.usage("app1", "t1", "api", "monthly", T0));
  await log("usage.list", db.billing.usageList("app1", "t1", T0, T0));

  await log("invites.create", db.invites.create(invite("i1", "app1", "t1", "ih1", T0), 2));
  await log("invites.create 2", db.invites.create(invite("i2", "app1", "t1", "ih2", T0 + 1), 2));
  await log("invites.create over", db.invites.create(invite("i3", "app1", "t1", "ih3", T0 + 2), 2));
  await log("invites.spent", db.invites.spent("app1", "t1", T0 + 3));
  await log("invites.list", db.invites.list("app1", "t1"));
  await log("invites.remove", db.invites.remove("app1", "t1", "i2"));
  await log("invites.remove missing", db.invites.remove("app1", "t1", "i2"));
  await log("invites.signup with invite", db.tenants.createWithSession(tenant("t5", "app1", "new@x.io", T0 + 5), session("s5", T0 + 5), (id) => {
    if (!db.invites.useInTransaction("app1", "ih1", id, T0 + 5)) throw new Error("invalid invite");
  }));
  await log("invites.signup reused invite", db.tenants.createWithSession(tenant("t6", "app1", "new2@x.io", T0 + 6), session("s6", T0 + 6), (id) => {
    if (!db.invites.useInTransaction("app1", "ih1", id, T0 + 6)) throw new Error("invalid invite");
  }).catch((e: Error) => e.message));
  await log("invites.t6 absent", db.tenants.findById("app1", "t6"));
  await log("invites.byHash", db.invites.findByHash("app1", "ih1"));
  await log("invites.remove used", db.invites.remove("app1", "t1", "i1"));

  await log("family.invite", db.family.createInvite(invite("fi1", "app1", "t0", "fh1", T0), 2));
  await log("family.invite 2", db.family.createInvite(invite("fi2", "app1", "t0", "fh2", T0), 2));
  await log("family.invite full", db.family.createInvite(invite("fi3", "app1", "t0", "fh3", T0), 2));
  await log("family.join own", db.family.join("app1", "fh1", "t0", 2, T0 + 1));
  await log("family.join", db.family.join("app1", "fh1", "t2", 2, T0 + 1));
  await log("family.join again", db.family.join("app1", "fh2", "t2", 2, T0 + 2));
  await log("family.signup member", db.tenants.createWithSession(tenant("t7", "app1", "fam@x.io", T0 + 7), session("s7", T0 + 7), (id) => {
    const r = db.family.joinInTransaction("app1", "fh2", id, 2, T0 + 7);
    if (r.kind !== "joined") throw new Error(r.kind);
  }));
  await log("family.signup invalid", db.tenants.createWithSession(tenant("t8", "app1", "fam2@x.io", T0 + 8), session("s8", T0 + 8), (id) => {
    const r = db.family.joinInTransaction("app1", "fh2", id, 2, T0 + 8);
    if (r.kind !== "joined") throw new Error(r.kind);
  }).catch((e: Error) => e.message));
  await log("family.members", db.family.members("app1", "t0"));
  await log("family.membership", db.family.membership("app1", "t7"));
  await log("family.seats", db.family.seatCounts("app1", "t0", T0 + 9));
  await log("family.listInvites", db.family.listInvites("app1", "t0"));
  await log("family.revoke used", db.family.revokeInvite("app1", "t0", "fi1"));
  await log("family.t2 parent", db.tenants.findById("app1", "t2"));
  await log("family.remove", db.family.removeMember("app1", "t0", "t2"));
  await log("family.leave", db.family.leave("app1", "t7"));
  await log("family.leave again", db.family.leave("app1", "t7"));
  await log("family.t7 parent", db.tenants.findById("app1", "t7"));

  const link = (id: string, email: string | null, verified: boolean, at: number) => ({ appId: "app1", provider: "github", providerAccountId: id, email, emailVerified: verified, at });
  await log("oauth.state", db.oauth.createState({ stateHash: "st1", appId: "app1", provider: "github", redirectUrl: "https://r", inviteToken: null, codeVerifier: "cv", browserHash: "bh", createdAt: T0, expiresAt: T0 + 600 }));
  await log("oauth.consume mismatch", db.oauth.consumeState("st1", (h) => h === "other", T0 + 1));
  await log("oauth.consume", db.oauth.consumeState("st1", (h) => h === "bh", T0 + 1));
  await log("oauth.consume used", db.oauth.consumeState("st1", (h) => h === "bh", T0 + 2));
  await log("oauth.consume unknown", db.oauth.consumeState("st2", () => true, T0 + 2));
  const step = db.oauth.linkStep(link("gh1", "oa@x.io", true, T0));
  await log("oauth.signup", db.tenants.createWithSession({ ...tenant("t10", "app1", "oa@x.io", T0), passwordHash: null }, session("s10", T0), (id) => step(id)));
  await log("oauth.findTenant", db.oauth.findTenant("app1", "github", "gh1"));
  await log("oauth.touch", db.oauth.touch(link("gh1", "oa2@x.io", false, T0 + 5)));
  await log("oauth.linkExisting", db.oauth.linkExisting(link("gh2", "user3_%@x.io", true, T0 + 6), "t3"));
  await log("oauth.linked tenant", db.tenants.findById("app1", "t3"));
  await log("oauth.list", db.oauth.listForTenant("app1", "t10"));

  await log("tenants.remove", db.tenants.remove("app1", "t1"));
  await log("tenants.remove again", db.tenants.remove("app1", "t1"));
  await log("files after tenant removed", db.files.usedBytes("app1", "t1"));
  await log("apps.remove", db.apps.remove("app2"));
  await log("apps.count after", db.apps.count());
  return out;
}

describe("the PostgreSQL repositories answer exactly as the SQLite ones", () => {
  let sqlite: Engine;
  let pg: Engine;
  beforeAll(async () => {
    [sqlite, pg] = await Promise.all([sqliteEngine(), postgresEngine()]);
  });
  afterAll(async () => {
    await sqlite?.close();
    await pg?.close();
  });

  test("one history, every answer equal", async () => {
    const expected = await history(sqlite.db);
    const actual = await history(pg.db);
    expect(actual.length).toBe(expected.length);
    for (let i = 0; i < expected.length; i++) expect(actual[i]).toEqual(expected[i]);
  });
});
