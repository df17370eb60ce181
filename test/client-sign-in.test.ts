import { describe, expect, it } from "vitest";
import { outboxFor } from "./_email.ts";
import { clientBackend, PASSWORD } from "./client-helpers.ts";

const PAGE = "https://app.example.com/signed-in";

describe("tenantd/client sign-in methods (issue 42)", () => {
  it("signs in with an emailed code, and with the link on the app's page", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { emailSignIn: true }, oauth: { redirectUrls: [PAGE] } } });
    const c = client();
    expect(await c.auth.sendEmailSignIn({ email: "code@example.com" })).toEqual({ ok: true, expiresIn: 600 });
    const [byCode] = (await outboxFor(t, "code@example.com")).filter((m) => m.kind === "sign-in");
    const tenant = await c.auth.verifyEmailCode({ email: "code@example.com", code: /\d{6}/.exec(byCode!.subject)![0] });
    expect((await c.auth.me()).id).toBe(tenant.id);
    await c.auth.signOut();

    await c.auth.sendEmailSignIn({ email: "code@example.com", redirectUrl: PAGE });
    const [byLink] = (await outboxFor(t, "code@example.com")).filter((m) => m.kind === "sign-in");
    const replaced: string[] = [];
    const again = await c.auth.handleEmailSignInRedirect(byLink!.link!, { replaceState: (_d, _u, url) => replaced.push(url!) });
    expect(again?.id).toBe(tenant.id);
    expect(replaced).toEqual([PAGE]);
    expect(await c.auth.handleEmailSignInRedirect(PAGE)).toBeNull();
  });

  it("signs in anonymously and upgrades to email and password, keeping the tenant", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { anonymous: true } } });
    const c = client();
    const anon = await c.auth.signInAnonymously();
    await c.collection("notes").create({ text: "mine" });
    const { upgradeToken } = await c.auth.anonymousUpgradeToken();
    expect(c.oauthUrl("google", { redirect: PAGE, upgradeToken })).toContain(`upgradeToken=${upgradeToken}`);
    const upgraded = await c.auth.upgradeAnonymous({ email: "later@example.com", password: PASSWORD });
    expect(upgraded).toMatchObject({ id: anon.id, email: "later@example.com" });
    expect((await c.auth.getSession())?.tenant?.email).toBe("later@example.com");
    expect((await c.collection("notes").list()).records).toHaveLength(1);
  });
});
