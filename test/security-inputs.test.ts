import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend } from "./_helpers.ts";

describe("access-token signatures have one spelling (review item 16)", () => {
  it("refuses the same token with junk appended, '-_' spelled '+/', or padding", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const me = (accessToken: string) => t.request("GET", "/api/v1/auth/me", { bearer: { accessToken, appId: t.app.id } });
    expect((await me(tenant.accessToken)).status).toBe(200);
    const [h, p, sig] = tenant.accessToken.split(".") as [string, string, string];
    const variants = [`${tenant.accessToken}~~`, `${tenant.accessToken}=`, `${h}.${p}.${sig}A`.slice(0, -1) + "_".repeat(0) + "=", `${h}.${p}.${sig.replace(/-/g, "+").replace(/_/g, "/")}`, `${h}.${p}=.${sig}`];
    // Make sure the '+/' variant really differs (a signature without '-' or '_' has no such twin).
    const distinct = variants.filter((v) => v !== tenant.accessToken);
    for (const v of distinct) {
      const res = await me(v);
      expect(res.status, v).toBe(401);
    }
    // Trailing bits: the last base64url character of a 32-byte signature carries 2 unused bits.
    const last = sig.at(-1)!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const twin = alphabet[alphabet.indexOf(last) ^ 1]!;
    expect((await me(`${h}.${p}.${sig.slice(0, -1)}${twin}`)).status).toBe(401);
  });
});

describe("bodies refuse unknown fields everywhere (review item 18)", () => {
  it("invite-token and family-invite creation name a misspelt field instead of using the default", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const res = await t.request("POST", "/api/v1/tenants/me/invite-tokens", { bearer: tenant.bearer, body: { expiresIn: 120 } });
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toContain("expiresIn");
    const fam = await t.request("POST", "/api/v1/tenants/me/family-invites", { bearer: tenant.bearer, body: { expiresIn: 120 } });
    expectError(fam, 400, "invalid_request");
    expect(fam.body.message).toContain("expiresIn");
  });
});

describe("one expiresInSeconds rule (review item 19)", () => {
  it("share links, invite tokens and family invites all take 1 second and refuse 0", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { invites: { defaultQuota: 5 } } });
    const tenant = await signupTenant(t);
    const rec = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { a: 1 } } });
    const share = (n: number) => t.request("POST", `/api/v1/data/notes/${rec.body.record.id}/share`, { bearer: tenant.bearer, body: { expiresInSeconds: n } });
    const invite = (n: number) => t.request("POST", "/api/v1/tenants/me/invite-tokens", { bearer: tenant.bearer, body: { expiresInSeconds: n } });
    expect((await share(1)).status).toBe(201);
    expect((await invite(1)).status).toBe(201);
    expectError(await share(0), 400, "invalid_request");
    expectError(await invite(0), 400, "invalid_request");
  });
});
