import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend } from "./_helpers.ts";
import { tokenFromOutbox } from "./_email.ts";

describe("common passwords are refused (review item 11)", () => {
  it("tenant sign-up, password reset and family consume refuse them, saying why", async () => {
    const t = await startBackend();
    for (const password of ["password", "12345678", "Password1", "qwertyuiop", " iloveyou "]) {
      const res = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: `p${password.length}@example.com`, password } });
      expectError(res, 400, "invalid_request");
      expect(res.body.message).toContain("most common passwords");
    }
    const tenant = await signupTenant(t);
    await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body: { email: tenant.email } });
    const token = await tokenFromOutbox(t, tenant.email, "reset");
    const reset = await t.request("POST", "/api/v1/auth/reset-password", { key: t.app.publishableKey, body: { token, password: "letmein123" } });
    expectError(reset, 400, "invalid_request");
    expect(reset.body.message).toContain("most common passwords");
    // The token was not spent on the refusal.
    expect((await t.request("POST", "/api/v1/auth/reset-password", { key: t.app.publishableKey, body: { token, password: "a brand new passphrase" } })).status).toBe(200);
  });

  it("developers too", async () => {
    const t = await startBackend();
    await expect(t.backend.admin.createDeveloper({ email: "dev@example.com", password: "password123" })).rejects.toThrow(/most common passwords/);
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "a strong developer passphrase" });
  });
});
