import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { AppRow } from "../src/db/types.ts";
import { providerConfig } from "../src/oauth/providers.ts";
import { stripeFor } from "../src/billing/stripe.ts";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver, type Received } from "./_webhook-receiver.ts";

const SECRET_SETTINGS = {
  billing: { stripeSecretKey: "sk_test_app_a_secret", stripeWebhookSecret: "whsec_app_a" },
  oauth: { providers: { github: { enabled: true, clientId: "gh-a", clientSecret: "gh-secret-of-a" } } },
};

async function twoApps(config = {}) {
  const t = await startBackend(config);
  const developer = await developerSession(t);
  const create = async (name: string, settings: object) => {
    const res = await t.request("POST", "/api/v1/admin/apps", { developer, body: { name, settings } });
    expect(res.status, res.text).toBe(201);
    return res.body.app as { id: string; publishableKey: string };
  };
  const a = await create("app-a", SECRET_SETTINGS);
  const b = await create("app-b", { oauth: { providers: { github: { enabled: true, clientId: "gh-b", clientSecret: "gh-secret-of-b" } } } });
  return { t, developer, a, b, row: async (id: string) => (await t.backend.core.db.apps.findById(id))! };
}

type Secrets = { billing: { stripeSecretKey?: string; stripeWebhookSecret?: string }; oauth: { providers: Record<string, { clientSecret?: string }> } };
const secretsOf = (app: AppRow) => app.settings as unknown as Secrets;

describe("app-settings secrets are bound to their app (AES-GCM associated data)", () => {
  it("are stored in the bound enc:v2 form and open for their own app", async () => {
    const { t, a, row } = await twoApps();
    const stored = secretsOf(await row(a.id));
    expect(stored.billing.stripeSecretKey).toMatch(/^enc:v2:/);
    expect(stored.billing.stripeWebhookSecret).toMatch(/^enc:v2:/);
    expect(stored.oauth.providers.github!.clientSecret).toMatch(/^enc:v2:/);
    expect(providerConfig(t.backend.core, await row(a.id), "github").clientSecret).toBe("gh-secret-of-a");
    expect(stripeFor(t.backend.core, await row(a.id))).not.toBeNull();
  });

  it("a sealed secret copied into another app's row (through the repository) does not open there", async () => {
    const { t, a, b, row } = await twoApps();
    const core = t.backend.core;
    const fromA = secretsOf(await row(a.id));
    const target = await row(b.id);
    const forged = structuredClone(target.settings) as unknown as Secrets;
    forged.billing.stripeSecretKey = fromA.billing.stripeSecretKey;
    forged.oauth.providers.github!.clientSecret = fromA.oauth.providers.github!.clientSecret;
    await core.db.apps.update({ ...target, settings: forged as unknown as AppRow["settings"], updatedAt: core.clock() });

    const copied = await row(b.id);
    expect(() => providerConfig(core, copied, "github")).toThrow(/cannot decrypt a stored secret/);
    expect(() => stripeFor(core, copied)).toThrow(/cannot decrypt a stored secret/);
  });

  it("refuses a sealed value sent over HTTP as a setting, so another row's secret cannot be planted", async () => {
    const { t, developer, a, b, row } = await twoApps();
    const fromA = secretsOf(await row(a.id)).billing.stripeSecretKey!;
    const res = await t.request("PATCH", `/api/v1/admin/apps/${b.id}`, { developer, body: { settings: { billing: { stripeSecretKey: fromA } } } });
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toBe('settings.billing.stripeSecretKey: give the secret itself (or "[encrypted]" to keep the stored one), not an encrypted value copied from elsewhere.');
    expect(secretsOf(await row(b.id)).billing.stripeSecretKey).toBeUndefined();
    const created = await t.request("POST", "/api/v1/admin/apps", { developer, body: { name: "app-c", settings: { oauth: { providers: { github: { clientSecret: fromA } } } } } });
    expectError(created, 400, "invalid_request");
    expect(created.body.message).toContain("settings.oauth.providers.github.clientSecret:");
  });

  it("keeps unbound enc:v1 secrets written before readable, and binds them on the next write", async () => {
    const { t, developer, b, row } = await twoApps();
    const core = t.backend.core;
    const target = await row(b.id);
    const legacy = structuredClone(target.settings) as unknown as Secrets;
    legacy.oauth.providers.github!.clientSecret = core.secrets.seal("legacy-secret");
    await core.db.apps.update({ ...target, settings: legacy as unknown as AppRow["settings"], updatedAt: core.clock() });
    expect(secretsOf(await row(b.id)).oauth.providers.github!.clientSecret).toMatch(/^enc:v1:/);
    expect(providerConfig(core, await row(b.id), "github").clientSecret).toBe("legacy-secret");

    const renamed = await t.request("PATCH", `/api/v1/admin/apps/${b.id}`, { developer, body: { name: "app-b2" } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.app.settings.oauth.providers.github.clientSecret).toBe("[encrypted]");
    expect(secretsOf(await row(b.id)).oauth.providers.github!.clientSecret).toMatch(/^enc:v2:/);
    expect(providerConfig(core, await row(b.id), "github").clientSecret).toBe("legacy-secret");
  });
});

function signedWith(r: Received, secret: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers["x-service-signature"]));
  return !!m && createHmac("sha256", secret).update(Buffer.concat([Buffer.from(`${m[1]}.`), r.raw])).digest("hex") === m[2];
}

async function emitResend(t: TestBackend, appId: string, tenantId: string) {
  const core = t.backend.core;
  const app = (await core.db.apps.findById(appId))!;
  const tenant = (await core.db.tenants.findById(appId, tenantId))!;
  await core.hooks.emit("tenant.verificationResent", { app, tenant, verifyToken: "vt_x", verifyUrl: "https://app.example.com/verify?token=vt_x", expiresAt: Date.UTC(2026, 0, 16) });
}

describe("webhook signing secrets are bound to their app", () => {
  it("are stored bound; one copied into another app's config signs nothing there, and v1 secrets still sign", async () => {
    const { t, developer, a, b } = await twoApps({ webhooks: { allowInsecure: true } });
    const core = t.backend.core;
    const rx = await startReceiver();
    const secretA = await configureWebhook(t, developer, rx.url, a.id);
    await configureWebhook(t, developer, rx.url, b.id);
    const sealedA = (await core.db.webhooks.findConfig(a.id))!.secretSealed;
    expect(sealedA).toMatch(/^enc:v2:/);

    // A's sealed secret put into B's config (the real repository): B's delivery is not signed with it.
    await core.db.webhooks.setSecret(b.id, sealedA, core.clock());
    const tenantB = await signupTenant(t, { key: b.publishableKey });
    await emitResend(t, b.id, tenantB.id);
    const [failed] = await finishedDeliveries(t, developer, 1, b.id);
    expect(failed).toMatchObject({ status: "failed", error: "internal error while preparing the delivery" });
    expect(rx.received).toHaveLength(0);

    // A's own deliveries still sign with A's secret.
    const tenantA = await signupTenant(t, { key: a.publishableKey });
    await emitResend(t, a.id, tenantA.id);
    await finishedDeliveries(t, developer, 1, a.id);
    expect(rx.received).toHaveLength(1);
    expect(signedWith(rx.received[0]!, secretA)).toBe(true);

    // A secret sealed before binding (enc:v1) keeps signing.
    await core.db.webhooks.setSecret(b.id, core.secrets.seal("whsec_legacy"), core.clock());
    await emitResend(t, b.id, tenantB.id);
    await finishedDeliveries(t, developer, 2, b.id);
    expect(rx.received).toHaveLength(2);
    expect(signedWith(rx.received[1]!, "whsec_legacy")).toBe(true);
  });
});
