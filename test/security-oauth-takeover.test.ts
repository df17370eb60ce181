import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { tokenFromOutbox } from "./_email.ts";
import { me, oauthBackend, signInWith, useFakeOAuth } from "./oauth-helpers.ts";
import { storeRows } from "./_store.ts";

const fake = useFakeOAuth();
const PASSWORD = "correct horse battery";

describe("pre-account takeover through an unverified provider email (review item 1)", () => {
  it("an attacker's unverified provider email never becomes the tenant's address: the victim signs up and the attacker's link reaches nothing of theirs", async () => {
    const t = await oauthBackend(fake);
    const victim = "victim@example.com";
    // The attacker signs in first with the victim's address, which Discord has not verified.
    const attacker = await signInWith(t, fake, "discord", { id: "attacker-1", email: victim, verified: false });
    expect(attacker.fragment.get("service_oauth")).toBe("success");
    const attackerTenant = (await me(t, attacker.fragment.get("service_access_token")!)).body.tenant;
    expect(attackerTenant).toMatchObject({ email: "discord-attacker-1@oauth.invalid", emailVerifiedAt: null });
    // The victim signs up with their own address (before the fix: 409 email_exists, or worse a reset into the attacker's account).
    const signup = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: victim, password: PASSWORD } });
    expect(signup.status, signup.text).toBe(201);
    expect(signup.body.tenant.id).not.toBe(attackerTenant.id);
    // The attacker's provider link still signs into the attacker's own placeholder account only.
    const again = await signInWith(t, fake, "discord", { id: "attacker-1", email: victim, verified: false });
    expect((await me(t, again.fragment.get("service_access_token")!)).body.tenant.id).toBe(attackerTenant.id);
  });

  it("an unverified email is never a match key: the existing account is neither linked nor refused by address", async () => {
    const t = await oauthBackend(fake);
    const existing = await signupTenant(t);
    for (const provider of ["discord", "apple", "facebook"] as const) {
      const account = provider === "apple" ? { id: "001.x.01", email: existing.email, emailOnlyInUserField: true } : { id: `${provider}-9`, email: existing.email, verified: provider !== "discord" };
      const { fragment } = await signInWith(t, fake, provider, account);
      expect(fragment.get("service_oauth"), provider).toBe("success");
      const tenant = (await me(t, fragment.get("service_access_token")!)).body.tenant;
      expect(tenant.id, provider).not.toBe(existing.id);
      expect(tenant.email, provider).toMatch(/@oauth\.invalid$/);
    }
    expect(await storeRows(t.backend).value("SELECT COUNT(*) FROM oauth_accounts WHERE tenant_id = ?", existing.id)).toBe(0);
  });

  it("proving the address (verify-email, password reset, verified provider) removes links made without a verified email and ends their sessions", async () => {
    for (const proof of ["verify", "reset", "provider"] as const) {
      const t = await oauthBackend(fake);
      const owner = await signupTenant(t);
      // A link made before this release on an unverified email (the shape the old code stored).
      await signInWith(t, fake, "discord", { id: `legacy-${proof}`, email: "someone-else@example.com", verified: false });
      await storeRows(t.backend).run("UPDATE oauth_accounts SET tenant_id = ? WHERE provider_account_id = ?", owner.id, `legacy-${proof}`);
      const attacker = await signInWith(t, fake, "discord", { id: `legacy-${proof}`, email: "someone-else@example.com", verified: false });
      expect((await me(t, attacker.fragment.get("service_access_token")!)).body.tenant.id).toBe(owner.id);
      if (proof === "verify") {
        const token = await tokenFromOutbox(t, owner.email, "verify");
        const res = await t.request("POST", "/api/v1/auth/verify-email", { key: t.app.publishableKey, body: { token } });
        expect(res.status, res.text).toBeLessThan(300);
      } else if (proof === "reset") {
        await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body: { email: owner.email } });
        const token = await tokenFromOutbox(t, owner.email, "reset");
        const res = await t.request("POST", "/api/v1/auth/reset-password", { key: t.app.publishableKey, body: { token, password: "a brand new passphrase" } });
        expect(res.status, res.text).toBeLessThan(300);
      } else {
        await signInWith(t, fake, "google", { id: "g-owner", email: owner.email, verified: true });
      }
      expectError(await me(t, attacker.fragment.get("service_access_token")!), 401, "session_ended");
      const links = await storeRows(t.backend).column("SELECT provider FROM oauth_accounts WHERE tenant_id = ?", owner.id);
      expect(links, proof).toEqual(proof === "provider" ? ["google"] : []);
      // The attacker's provider account no longer reaches the owner's account.
      const back = await signInWith(t, fake, "discord", { id: `legacy-${proof}`, email: "someone-else@example.com", verified: false });
      const token = back.fragment.get("service_access_token");
      if (token) expect((await me(t, token)).body.tenant.id).not.toBe(owner.id);
      else expect(back.fragment.get("error")).toBe("email_exists");
    }
  });
});
