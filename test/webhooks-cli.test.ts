import { createHmac } from "node:crypto";
import { runCommand } from "citty";
import { afterEach, describe, expect, it, vi } from "vitest";
import webhook from "../src/cli/webhook.ts";
import tenant from "../src/cli/tenant.ts";
import { cliStoreEnv, developerSession, signupTenant, startBackend } from "./_helpers.ts";
import { finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** Runs a CLI command in this process against the data directory and returns what it printed. */
async function cli(cmd: Parameters<typeof runCommand>[0], args: string[]): Promise<string> {
  let out = "";
  const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  // On PostgreSQL, the database of the backend on that data directory (undone after the test).
  for (const [k, v] of Object.entries(await cliStoreEnv(args))) vi.stubEnv(k, v);
  try {
    await runCommand(cmd, { rawArgs: args });
  } finally {
    write.mockRestore();
  }
  return out;
}

describe("tenantd webhook and tenant delete (CLI)", () => {
  it("sets, shows, rotates and lists deliveries; a CLI deletion is sent by the running server", async () => {
    vi.stubEnv("TENANTD_WEBHOOKS_ALLOW_INSECURE", "1");
    const t = await startBackend({ webhooks: { allowInsecure: true } });
    const developer = await developerSession(t);
    const rx = await startReceiver();
    const dir = ["--data-dir", t.dataDir, "--app", t.app.id];

    const set = JSON.parse(await cli(webhook, ["set", ...dir, "--url", rx.url, "--json"]));
    expect(set).toMatchObject({ url: rx.url, secret: expect.stringMatching(/^whsec_/) });
    const again = await cli(webhook, ["set", ...dir, "--url", rx.url]);
    expect(again).toContain("the signing secret is unchanged");
    expect(again).not.toContain(set.secret);

    const shown = await cli(webhook, ["show", ...dir]);
    expect(shown).toContain(`url:            ${rx.url}`);
    expect(shown).not.toContain("whsec_");

    const rotated = await cli(webhook, ["rotate", ...dir]);
    const secret = /signing secret: (whsec_\S+)/.exec(rotated)![1]!;
    expect(secret).not.toBe(set.secret);

    const victim = await signupTenant(t);
    const deleted = await cli(tenant, ["delete", victim.email, ...dir, "--yes"]);
    expect(deleted).toContain(`deleted tenant ${victim.id}`);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: victim.bearer })).status).toBe(401);

    // The CLI only queued the event; the server's dispatcher finds it on its next poll.
    await finishedDeliveries(t, developer, 1);
    const r = rx.received[0]!;
    const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(r.headers["x-service-signature"]))!;
    expect(createHmac("sha256", secret).update(`${ts}.`).update(r.raw).digest("hex")).toBe(v1);
    expect(JSON.parse(r.raw.toString()).payload).toEqual({ reason: "admin_delete", locale: "en" });

    const log = JSON.parse(await cli(webhook, ["deliveries", ...dir, "--json"]));
    expect(log).toMatchObject({ total: 1, queued: 0, deliveries: [{ event: "tenant.deleted", status: "delivered", tenantId: victim.id }] });
    expect(await cli(webhook, ["deliveries", ...dir])).toMatch(/delivered\s+tenant\.deleted\s+200/);
  });
});
