// Social login goes through the sign-in finish: a tenant with MFA gets a ticket in the
// fragment, not tokens (issue 42 part A); linking a social account to an existing tenant
// is a new sign-in method the tenant is told about.
import { describe, expect, it } from "vitest";
import { signupTenant } from "./_helpers.ts";
import { enrolTotp, totpCode, verify } from "./_mfa.ts";
import { outboxFor } from "./_email.ts";
import { me, oauthBackend, signInWith, useFakeOAuth } from "./oauth-helpers.ts";

const fake = useFakeOAuth();

describe("social login with MFA", () => {
  it("a linked tenant with TOTP returns with mfa_required and a ticket; the code gives the tokens", async () => {
    const t = await oauthBackend(fake);
    const tenant = await signupTenant(t);
    // A verified address: linking keeps the tenant's password and sessions.
    await t.backend.core.db.tenants.markVerified(tenant.id, t.clock());
    // First sign-in links the account (no MFA yet): tokens, and the tenant is told.
    const first = await signInWith(t, fake, "github", { id: "77", email: tenant.email, verified: true });
    expect(first.fragment.get("service_oauth")).toBe("success");
    expect((await outboxFor(t, tenant.email)).map((m) => m.kind)).toContain("security:sign_in_method.added");

    const { secret } = await enrolTotp(t, tenant);
    const { fragment } = await signInWith(t, fake, "github", { id: "77", email: tenant.email, verified: true });
    expect(fragment.get("service_oauth")).toBe("mfa_required");
    expect(fragment.get("service_access_token")).toBeNull();
    expect(fragment.get("service_mfa_methods")).toBe("totp,recovery_code");
    const ok = await verify(t, { mfaTicket: fragment.get("service_mfa_ticket"), code: totpCode(t, secret) });
    expect(ok.status, ok.text).toBe(200);
    expect((await me(t, ok.body.accessToken)).body.tenant.id).toBe(tenant.id);
    // The session remembers how it signed in.
    const session = await t.backend.core.db.sessions.state(JSON.parse(Buffer.from(ok.body.accessToken.split(".")[1], "base64url").toString()).sid);
    expect((await t.backend.core.db.mfa.sessionAuth(session!.id))!.methods).toBe("oauth:github+totp");
    // The audit trail has the first sign-in and the one the code completed, not the ticket.
    const { entries } = await t.backend.admin.listAudit(t.app.id, { action: "tenant.signed_in", tenant: tenant.id });
    expect(entries.map((e) => e.details?.method)).toEqual(["oauth:github+totp", "oauth:github"]);
  });

  it("requireMfa: a returning social tenant without MFA gets an enrolment-only ticket", async () => {
    const t = await oauthBackend(fake);
    await signInWith(t, fake, "google", { id: "g-1", email: "new@example.com", verified: true });
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { requireMfa: true } } });
    const { fragment } = await signInWith(t, fake, "google", { id: "g-1", email: "new@example.com", verified: true });
    expect(fragment.get("service_oauth")).toBe("mfa_required");
    expect(fragment.get("service_mfa_methods")).toBe("");
  });
});
