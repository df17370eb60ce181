// A tenant's sign-in methods on the dashboard, with "Reset MFA" and "Remove passkey" and
// their audit entries (issue 42), and the Jobs page listing cron runs (issue 47), in real
// Chromium against a real tenantd.
import { describe, expect, it } from "vitest";
import { cron } from "../src/index.ts";
import { openDashboard, type Dashboard } from "./_dashboard.ts";
import { signupTenant, type TestTenant } from "./_helpers.ts";
import { enrolTotp } from "./_mfa.ts";
import { softAuthenticator } from "./_passkey.ts";

const ORIGIN = "https://app.example.com";

/**
 * A tenant with a password, TOTP on and two passkeys, all set up through the API: "Work
 * laptop" never used, "Phone" just used to re-authenticate.
 */
async function secureTenant(d: Dashboard): Promise<{ tenant: TestTenant; passkeyId: string }> {
  await d.t.backend.admin.updateApp(d.t.app.id, { settings: { corsOrigins: [ORIGIN] } });
  const tenant = await signupTenant(d.t);
  await enrolTotp(d.t, tenant);
  const device = softAuthenticator(ORIGIN);
  const ids: string[] = [];
  for (const name of ["Work laptop", "Phone"]) {
    const options = await d.t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} });
    const added = await d.t.request("POST", "/api/v1/auth/passkeys/register", { bearer: tenant.bearer, body: { credential: device.create(options.body), name } });
    expect(added.status, added.text).toBe(201);
    ids.push(added.body.passkey.id);
  }
  const options = await d.t.request("POST", "/api/v1/auth/passkeys/options", { key: d.t.app.publishableKey, bearer: tenant.bearer, body: { purpose: "reauthenticate" } });
  // The newest credential, the phone, answers.
  const used = await d.t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body: { passkey: device.get(options.body) } });
  expect(used.status, used.text).toBe(200);
  return { tenant, passkeyId: ids[0]! };
}

const methodsOf = async (d: Dashboard, tenantId: string) =>
  (await d.call("GET", `/api/v1/admin/apps/${d.t.app.id}/tenants/${tenantId}/sign-in-methods`, { developer: d.devToken })).body;

describe("dashboard: a tenant's sign-in methods (issue 42)", { timeout: 90_000 }, () => {
  it("lists the methods, resets MFA and removes a passkey after confirming, and the Logs page shows both actions", async () => {
    const d = await openDashboard();
    const { tenant, passkeyId } = await secureTenant(d);
    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}`);
    await d.seeText("Sign-in methods");
    const card = await d.page.$eval("[data-testid=sign-in-methods]", (e) => (e as HTMLElement).innerText.replace(/\s+/g, " "));
    expect(card).toContain("Password Set");
    expect(card).toContain("Two-factor (TOTP) On, 10 recovery codes left");
    expect(card).toContain("Social accounts None linked");
    expect(card).toContain("Anonymous No");
    expect(card).toContain("Sign-in Allowed");
    const passkeyRows = async () => d.page.$$eval("[data-testid=passkeys] tbody tr", (trs) => trs.map((tr) => (tr as HTMLElement).innerText.replace(/\s+/g, " ").trim()));
    const [laptop, phone] = [(await passkeyRows()).find((r) => r.startsWith("Work laptop")), (await passkeyRows()).find((r) => r.startsWith("Phone"))];
    expect(laptop).toMatch(/Never Remove$/);
    expect(phone).not.toContain("Never");

    // Reset MFA: the dialog says what changes; Cancel changes nothing.
    await d.click("button::-p-text(Reset MFA…)");
    await d.page.waitForSelector("dialog[open]");
    expect(await d.page.$eval("dialog[open]", (e) => (e as HTMLElement).innerText)).toContain("authenticator app and recovery codes stop working");
    await d.click("dialog button::-p-text(Cancel)");
    expect((await methodsOf(d, tenant.id)).totp).toBe(true);
    await d.click("button::-p-text(Reset MFA…)");
    await d.click("dialog button[type=submit]");
    await d.seeText("Two-factor authentication reset");
    await d.page.waitForFunction(() => document.querySelector("[data-testid=totp]")?.textContent === "Off");
    expect(await d.page.$("button::-p-text(Reset MFA…)")).toBeNull();
    expect((await methodsOf(d, tenant.id)).totp).toBe(false);

    await d.click("button[aria-label='Remove passkey Work laptop']");
    await d.page.waitForSelector("dialog[open]");
    expect(await d.page.$eval("dialog[open]", (e) => (e as HTMLElement).innerText)).toContain("Remove the passkey “Work laptop”?");
    await d.click("dialog button[type=submit]");
    await d.seeText("Passkey “Work laptop” removed.");
    await d.page.waitForFunction(() => !document.querySelector("[data-testid=passkeys]")?.textContent?.includes("Work laptop"));
    expect((await passkeyRows()).map((r) => r.split(" ")[0])).toEqual(["Phone"]);
    expect((await methodsOf(d, tenant.id)).passkeys.map((p: { name: string }) => p.name)).toEqual(["Phone"]);

    await d.go(`/apps/${d.t.app.id}/logs?tab=audit`);
    await d.page.waitForSelector("[data-testid=audit]");
    const rows = await d.page.$$eval("[data-testid=audit] tbody tr", (trs) => trs.map((tr) => (tr as HTMLElement).innerText.replace(/\s+/g, " ")));
    // Who did it: the developer, by id, beside the tenant's own security-event entries.
    const developerId = (await d.call("GET", "/api/v1/developer/me", { developer: d.devToken })).body.developer.id as string;
    expect(rows.find((r) => r.includes("tenant.mfa_reset"))).toContain(`developer ${developerId} tenant.mfa_reset ${tenant.id}`);
    expect(rows.find((r) => r.includes("tenant.passkey_removed"))).toContain(`developer ${developerId} tenant.passkey_removed ${tenant.id} · ${passkeyId}`);
    expect(d.errors).toEqual([]);
  });
});

describe("dashboard: Jobs (issue 47)", { timeout: 90_000 }, () => {
  it("lists each cron job's last runs with a failure's error", async () => {
    const d = await openDashboard({ hooks: { cron: [cron("nightly-report", "every 1d", () => undefined)] } });
    // Two runs as nodes record them: one that worked, a later one that failed.
    const runs = d.t.backend.core.db.cron;
    const day = 24 * 60 * 60 * 1000;
    const slot = Math.floor(d.t.clock() / day) * day - day;
    await runs.claim("nightly-report", slot - day, "node-a", slot - day);
    await runs.finish("nightly-report", slot - day, "ok", null, slot - day + 40);
    await runs.claim("nightly-report", slot, "node-b", slot);
    await runs.finish("nightly-report", slot, "failed", "SMTP server refused the report", slot + 12);

    await d.go("/apps");
    await d.click("nav a::-p-text(Jobs)");
    await d.page.waitForFunction(() => document.querySelector("h1")?.textContent === "Jobs");
    await d.seeText("nightly-report");
    await d.seeText("Runs every 1d.");
    await d.seeText("1 of the last 2 runs failed.");
    const rows = await d.page.$$eval("[data-testid=job-nightly-report] tbody tr", (trs) => trs.map((tr) => (tr as HTMLElement).innerText.replace(/\s+/g, " ")));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/Failed node-b 12 ms SMTP server refused the report/);
    expect(rows[1]).toMatch(/OK node-a 40 ms/);
    expect(await d.page.$eval("nav a[aria-current=page]", (e) => e.textContent)).toBe("Jobs");
  });

  it("says how to add a job when the server has none", async () => {
    const d = await openDashboard();
    await d.go("/jobs");
    await d.seeText("No scheduled jobs on this server.");
    expect(await d.page.$("[data-testid=jobs-empty]")).not.toBeNull();
  });
});
