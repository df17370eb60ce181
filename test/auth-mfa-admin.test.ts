// The developer's view of a tenant's sign-in methods, and resetting MFA or removing a
// passkey for a tenant who lost a device (issue 42).
import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend } from "./_helpers.ts";
import { enrolTotp, login } from "./_mfa.ts";
import { outboxFor } from "./_email.ts";
import { softAuthenticator } from "./_passkey.ts";

const ORIGIN = "https://app.example.com";

describe("developer: a tenant's sign-in methods", () => {
  it("lists them, resets MFA and removes a passkey; the tenant is emailed; another developer's app is not found", async () => {
    const t = await startBackend();
    const dev = await developerSession(t);
    const app = (await t.request("POST", "/api/v1/admin/apps", { developer: dev, body: { name: "Support", settings: { corsOrigins: [ORIGIN] } } })).body.app;
    // The test backend as seen by the developer's own app.
    const scoped = { ...t, app: { id: app.id, publishableKey: app.publishableKey } };
    const tenant = await signupTenant(scoped, { key: app.publishableKey, appId: app.id });
    await enrolTotp(scoped, tenant);
    const device = softAuthenticator(ORIGIN);
    const options = await t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} });
    const passkey = (await t.request("POST", "/api/v1/auth/passkeys/register", { bearer: tenant.bearer, body: { credential: device.create(options.body), name: "Phone" } })).body.passkey;

    const base = `/api/v1/admin/apps/${app.id}/tenants/${tenant.id}`;
    const methods = await t.request("GET", `${base}/sign-in-methods`, { developer: dev });
    expect(methods.body).toEqual({ password: true, anonymous: false, totp: true, recoveryCodesLeft: 10, passkeys: [expect.objectContaining({ id: passkey.id, name: "Phone" })], providers: [] });

    // Another developer does not see this app's tenants.
    const stranger = await developerSession(t);
    expectError(await t.request("DELETE", `${base}/mfa`, { developer: stranger }), 404, "not_found");

    expect((await t.request("DELETE", `${base}/mfa`, { developer: dev })).status).toBe(204);
    expect((await login(scoped, tenant.email)).body.accessToken).toBeTypeOf("string");
    expect((await t.request("DELETE", `${base}/passkeys/${passkey.id}`, { developer: dev })).status).toBe(204);
    expectError(await t.request("DELETE", `${base}/passkeys/${passkey.id}`, { developer: dev }), 404, "not_found");
    expect((await t.request("GET", `${base}/sign-in-methods`, { developer: dev })).body).toMatchObject({ totp: false, recoveryCodesLeft: 0, passkeys: [] });
    // The trail names the developer who did each, on the action and on the security event it caused.
    const audit = (await t.request("GET", `/api/v1/admin/apps/${app.id}/audit?tenant=${tenant.id}&action=tenant.*`, { developer: dev })).body.entries as { action: string; actor: { type: string }; target: string | null }[];
    expect(audit.filter((e) => e.actor.type === "developer").map((e) => [e.action, e.target])).toEqual(expect.arrayContaining([["tenant.mfa_reset", null], ["tenant.passkey_removed", passkey.id]]));
    const caused = audit.filter((e) => e.action === "tenant.mfa.disabled" || e.action === "tenant.passkey.removed");
    expect(caused.map((e) => [e.action, e.actor.type]).sort()).toEqual([["tenant.mfa.disabled", "developer"], ["tenant.passkey.removed", "developer"]]);
    expect((await outboxFor(t, tenant.email)).map((m) => m.kind)).toEqual(expect.arrayContaining(["security:mfa.disabled", "security:passkey.removed"]));
  });
});
