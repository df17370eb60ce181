import { cliStoreEnv, withCleanEnv } from "./_helpers.ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCommand } from "citty";
import planCommand from "../src/cli/plan.ts";
import billingCommand from "../src/cli/billing.ts";
import { billingBackend } from "./billing-fixtures.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs a CLI command in-process against the data directory and returns its JSON output. */
async function cli(cmd: typeof planCommand | typeof billingCommand, dataDir: string, args: string[]): Promise<any> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const rawArgs = [...args, "--data-dir", dataDir, "--json"];
    await withCleanEnv(() => runCommand(cmd, { rawArgs }), await cliStoreEnv(rawArgs));
  } finally {
    spy.mockRestore();
  }
  return JSON.parse(out.join(""));
}

describe("billing CLI", () => {
  it("manages plans and a tenant's gift and trial on the data directory the server uses", async () => {
    const b = await billingBackend();
    const dir = b.t.dataDir;
    const app = b.t.app.id;
    const created = await cli(planCommand, dir, ["create", "--app", app, "--name", "Pro", "--slug", "pro", "--price-cents", "1200", "--entitlements", '{"projects":10}']);
    expect(created.plan).toMatchObject({ name: "Pro", slug: "pro", priceCents: 1200, currency: "usd", interval: "month", entitlements: { projects: 10 }, archived: false });
    const updated = await cli(planCommand, dir, ["update", "pro", "--app", app, "--sort-order", "5", "--interval", "year"]);
    expect(updated.plan).toMatchObject({ sortOrder: 5, interval: "year" });
    await cli(planCommand, dir, ["create", "--app", app, "--name", "Old", "--slug", "old", "--price-cents", "100"]);
    await cli(planCommand, dir, ["archive", "old", "--app", app]);
    expect((await cli(planCommand, dir, ["list", "--app", app])).plans.map((p: { slug: string }) => p.slug)).toEqual(["pro"]);
    expect((await cli(planCommand, dir, ["list", "--app", app, "--all"])).plans).toHaveLength(2);

    // The running server sees what the CLI wrote.
    const listed = await b.t.request("GET", "/api/v1/billing/plans", { key: b.t.app.publishableKey });
    expect(listed.body.plans.map((p: { slug: string }) => p.slug)).toEqual(["pro"]);

    const tenant = await b.tenant();
    const gift = await cli(billingCommand, dir, ["gift", tenant.email, "--app", app, "--plan", "pro", "--days", "30"]);
    // The CLI runs on the system clock.
    expect(gift.subscription).toMatchObject({ source: "gift", planSlug: "pro" });
    expect(Math.abs(Date.parse(gift.subscription.giftExpiresAt) - (Date.now() + 30 * 86400_000))).toBeLessThan(60_000);
    expect(await b.entitlements(tenant)).toEqual({ projects: 10 });
    await cli(billingCommand, dir, ["trial", tenant.id, "--app", app, "--plan", "pro", "--days", "7"]);
    const shown = await cli(billingCommand, dir, ["show", tenant.id, "--app", app]);
    expect(shown.sources.map((s: { source: string }) => s.source).sort()).toEqual(["gift", "trial"]);
    expect(shown.subscription.source).toBe("gift");
  });
});
