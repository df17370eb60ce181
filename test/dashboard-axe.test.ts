// axe-core on every dashboard page, desktop (1440×900) and phone (390×844), with data on
// each page: 0 violations.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { cron } from "../src/index.ts";
import { mailerFor } from "../src/email/mailer.ts";
import { DESKTOP, DEV, openDashboard, PHONE, type Dashboard } from "./_dashboard.ts";
import { signupTenant } from "./_helpers.ts";
import { startReceiver } from "./_webhook-receiver.ts";
import { enrolTotp } from "./_mfa.ts";
import { softAuthenticator } from "./_passkey.ts";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe's violations on the current page, as "rule: selector" lines. */
async function violations(d: Dashboard): Promise<string[]> {
  // Evaluated over the DevTools protocol, so the page's CSP (no inline script) does not apply.
  await d.page.evaluate(AXE);
  return d.page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.help}): ${n.target.join(" ")}`));
  });
}

async function seed(d: Dashboard) {
  const app = d.t.app.id;
  const dev = { developer: d.devToken };
  await d.call("POST", `/api/v1/admin/apps/${app}/plans`, { ...dev, body: { name: "Pro", slug: "pro", priceCents: 900, currency: "usd", interval: "month", entitlements: { pro: true, projects: 3 } } });
  const tenant = await signupTenant(d.t);
  await signupTenant(d.t);
  for (let n = 1; n <= 3; n++) await d.call("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { n, title: `Note ${n}` } } });
  const receiver = await startReceiver();
  await d.t.backend.admin.setWebhookUrl(app, receiver.url);
  await d.call("POST", `/api/v1/admin/apps/${app}/event-webhook-config/test`, dev);
  await d.call("POST", `/api/v1/admin/apps/${app}/tenants/${tenant.id}/resend-verification`, dev);
  // Sign-in methods with something in each list, and a job with an ok and a failed run.
  await d.t.backend.admin.updateApp(app, { settings: { corsOrigins: ["https://app.example.com"], orgs: { roles: { recruiter: { permissions: ["members.invite"] } } } } });
  // An organization with a second member and an open invite link.
  const org = (await d.call("POST", "/api/v1/orgs", { bearer: tenant.bearer, body: { name: "Acme" } })).body.org;
  const link = (await d.call("POST", `/api/v1/orgs/${org.id}/invites`, { bearer: tenant.bearer, body: {} })).body.invite;
  await d.call("POST", "/api/v1/orgs/invites/accept", { bearer: (await signupTenant(d.t)).bearer, body: { token: link.token } });
  await d.call("POST", `/api/v1/orgs/${org.id}/invites`, { bearer: tenant.bearer, body: { role: "recruiter" } });
  // Its Billing card with a plan, entitlements and a usage counter.
  const pro = (await d.call("GET", `/api/v1/admin/apps/${app}/plans`, dev)).body.plans[0];
  expect((await d.call("POST", `/api/v1/admin/apps/${app}/orgs/${org.id}/billing/gift`, { ...dev, body: { planId: pro.id } })).status).toBe(200);
  expect((await d.call("POST", `/api/v1/orgs/${org.id}/billing/usage/projects/increment`, { bearer: tenant.bearer, body: {} })).status).toBe(200);
  await enrolTotp(d.t, tenant);
  const options = await d.call("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} });
  await d.call("POST", "/api/v1/auth/passkeys/register", { bearer: tenant.bearer, body: { credential: softAuthenticator("https://app.example.com").create(options.body), name: "Phone" } });
  const now = d.t.clock();
  await d.t.backend.core.db.cron.claim("nightly", now - 2000, "node-a", now - 2000);
  await d.t.backend.core.db.cron.finish("nightly", now - 2000, "ok", null, now - 1900);
  await d.t.backend.core.db.cron.claim("nightly", now - 1000, "node-a", now - 1000);
  await d.t.backend.core.db.cron.finish("nightly", now - 1000, "failed", "the job's own failure", now - 900);
  // Backups as an operator sees them: the forms and one archive listed (on PostgreSQL, the note that points at pg_dump).
  const me = (await d.call("GET", "/api/v1/developer/me", dev)).body.developer.id as string;
  await d.t.backend.core.db.developers.setBackupOperator(me, true, now);
  await d.call("POST", "/api/v1/admin/backups", { ...dev, body: { password: DEV.password } });
  await mailerFor(d.t.backend.core).idle();
  return tenant;
}

describe("dashboard accessibility (axe-core)", { timeout: 120_000 }, () => {
  for (const [label, viewport] of [["1440×900", DESKTOP], ["390×844", PHONE]] as const) {
    it(`every page has 0 violations at ${label}`, async () => {
      const d = await openDashboard({ hooks: { cron: [cron("nightly", "every 1d", () => undefined)] } }, viewport);
      const tenant = await seed(d);
      const app = d.t.app.id;
      const orgId = (await d.call("GET", `/api/v1/admin/apps/${app}/orgs`, { developer: d.devToken })).body.orgs[0].id as string;
      const pages = ["/apps", "/usage", "/api", "/backups", "/jobs", `/apps/${app}/email`, `/apps/${app}/logs`, `/apps/${app}/logs?tab=audit`, `/apps/${app}`, `/apps/${app}/settings`, `/apps/${app}/tenants`, `/apps/${app}/tenants/${tenant.id}`, `/apps/${app}/tenants/${tenant.id}/records/notes`, `/apps/${app}/plans`, `/apps/${app}/orgs`, `/apps/${app}/orgs/${orgId}`, `/apps/${app}/webhooks`, `/apps/${app}/outbox`, `/view-as/${app}/${tenant.id}`];
      const found: string[] = [];
      for (const hash of pages) {
        await d.go(hash);
        await d.page.waitForSelector("h1");
        found.push(...(await violations(d)).map((v) => `${hash} ${v}`));
      }
      // A confirmation dialog open, and the sign-in page.
      await d.go(`/apps/${app}/tenants/${tenant.id}`);
      await d.click("button::-p-text(Delete tenant…)");
      await d.page.waitForSelector("dialog[open]");
      found.push(...(await violations(d)).map((v) => `dialog ${v}`));
      await d.page.keyboard.press("Escape");
      await d.click("button[aria-label='Remove passkey Phone']");
      await d.page.waitForSelector("dialog[open]");
      found.push(...(await violations(d)).map((v) => `passkey dialog ${v}`));
      await d.page.keyboard.press("Escape");
      await d.go(`/apps/${app}/orgs/${orgId}`);
      await d.click("button::-p-text(Delete organization…)");
      await d.page.waitForSelector("dialog[open]");
      found.push(...(await violations(d)).map((v) => `org dialog ${v}`));
      await d.page.keyboard.press("Escape");
      await d.click("button::-p-text(Start trial…)");
      await d.page.waitForSelector("[data-testid=trial-changes]");
      found.push(...(await violations(d)).map((v) => `org trial dialog ${v}`));
      await d.page.keyboard.press("Escape");
      // The records browser live, with the banner of records that arrived under another sort.
      await d.go(`/apps/${app}/tenants/${tenant.id}/records/notes?sort=${encodeURIComponent('{"n":1}')}`);
      await d.page.waitForFunction(() => document.querySelector("[data-testid=live]")?.textContent === "Live");
      await d.call("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { n: 4 } } });
      await d.page.waitForSelector("[data-testid=new-records]");
      found.push(...(await violations(d)).map((v) => `live records ${v}`));
      await d.click("button::-p-text(Sign out)");
      await d.seeText("Sign in to tenantd");
      found.push(...(await violations(d)).map((v) => `sign-in ${v}`));
      expect(found).toEqual([]);
    });
  }
});
