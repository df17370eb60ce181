import { describe, expect, it } from "vitest";
import type { TenantBackendConfig } from "../src/index.ts";
import { expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { outboxFor } from "./_email.ts";
import { PASSWORD } from "./_auth.ts";
import { storeRows } from "./_store.ts";

const PAGE = "https://app.example.com/signed-in";

async function emailBackend(config: TenantBackendConfig = {}, settings: Record<string, unknown> = {}): Promise<TestBackend> {
  const t = await startBackend(config);
  await t.backend.admin.updateApp(t.app.id, { settings: { auth: { emailSignIn: true }, oauth: { redirectUrls: [PAGE] }, ...settings } });
  return t;
}
const ask = (t: TestBackend, body: Record<string, unknown>) => t.request("POST", "/api/v1/auth/email-sign-in", { key: t.app.publishableKey, body });
const verify = (t: TestBackend, body: Record<string, unknown>) => t.request("POST", "/api/v1/auth/email-sign-in/verify", { key: t.app.publishableKey, body });

/** The code and the link's token of the newest sign-in email to `to`. */
async function mailed(t: TestBackend, to: string) {
  const [message] = (await outboxFor(t, to)).filter((m) => m.kind === "sign-in");
  if (!message) return undefined;
  const code = /\b(\d{6})\b/.exec(message.subject)![1]!;
  const token = message.link ? new URLSearchParams(new URL(message.link).hash.slice(1)).get("service_email_token") : null;
  return { message, code, token };
}

describe("email codes and magic links (issue 42)", () => {
  it("is off until the app turns it on", async () => {
    const t = await startBackend();
    expectError(await ask(t, { email: "a@example.com" }), 403, "forbidden");
    expectError(await verify(t, { email: "a@example.com", code: "123456" }), 403, "forbidden");
  });

  it("signs up a new address with the 6-digit code: verified, a session, the code used up", async () => {
    const t = await emailBackend();
    const res = await ask(t, { email: " New@Example.com ", locale: "es" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ok: true, expiresIn: 600 });
    expect(res.headers.get("cache-control")).toBe("no-store");
    const got = (await mailed(t, "new@example.com"))!;
    expect(got.message.locale).toBe("es");
    expect(got.message.subject.startsWith(`${got.code} es tu código para entrar en `)).toBe(true);
    expect(got.message.text).toContain(got.code);
    // No page was named: the email has the code only.
    expect(got.token).toBeNull();
    const signed = await verify(t, { email: "new@example.com", code: got.code });
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body).toMatchObject({ tenant: { email: "new@example.com", emailVerifiedAt: expect.any(String) }, accessToken: expect.any(String), refreshToken: expect.stringMatching(/^rt_/) });
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: signed.body.accessToken, appId: t.app.id } })).status).toBe(200);
    expectError(await verify(t, { email: "new@example.com", code: got.code }), 401, "invalid_credentials");
  });

  it("the link opens the app's page with a single-use token in the fragment; the page must be on the app's list", async () => {
    const t = await emailBackend();
    const owner = await signupTenant(t, { email: "owner@example.com" });
    expect((await ask(t, { email: "owner@example.com", redirectUrl: PAGE })).status).toBe(202);
    const got = (await mailed(t, "owner@example.com"))!;
    expect(got.message.link!.startsWith(`${PAGE}#service_email_token=esi_`)).toBe(true);
    const signed = await verify(t, { token: got.token });
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body.tenant.id).toBe(owner.id);
    expectError(await verify(t, { token: got.token }), 400, "invalid_token");
    expectError(await ask(t, { email: "owner@example.com", redirectUrl: "https://evil.example.com/steal" }), 400, "invalid_redirect");
  });

  it("keeps only hashes: neither the code nor the link's token is in the database", async () => {
    const t = await emailBackend();
    await ask(t, { email: "hash@example.com", redirectUrl: PAGE });
    const got = (await mailed(t, "hash@example.com"))!;
    const dump = JSON.stringify(await storeRows(t.backend).all("SELECT * FROM email_sign_ins"));
    expect(dump).toContain("hash@example.com");
    expect(dump).not.toContain(got.code);
    expect(dump).not.toContain(got.token);
  });

  it("bounds guessing: five wrong codes kill the request, and a newer request replaces the older", async () => {
    const t = await emailBackend();
    await ask(t, { email: "guess@example.com" });
    const first = (await mailed(t, "guess@example.com"))!;
    const wrong = first.code === "000000" ? "000001" : "000000";
    for (let i = 0; i < 5; i++) expectError(await verify(t, { email: "guess@example.com", code: wrong }), 401, "invalid_credentials");
    const dead = await verify(t, { email: "guess@example.com", code: first.code });
    expectError(dead, 401, "invalid_credentials");
    expect(dead.body.message).toContain("Too many wrong codes");
    await ask(t, { email: "guess@example.com" });
    const second = (await mailed(t, "guess@example.com"))!;
    expect((await verify(t, { email: "guess@example.com", code: second.code })).status).toBe(200);
  });

  it("a code expires after 10 minutes", async () => {
    const t = await emailBackend();
    await ask(t, { email: "late@example.com" });
    const got = (await mailed(t, "late@example.com"))!;
    t.clock.advance(10 * 60 * 1000);
    const res = await verify(t, { email: "late@example.com", code: got.code });
    expectError(res, 401, "invalid_credentials");
    expect(res.body.message).toContain("expired");
  });

  it("wrong codes count toward the address's sign-in backoff, like wrong passwords", async () => {
    const t = await emailBackend({ rateLimit: { windowSeconds: 60, perIp: 1000, perEmail: 1000 } });
    await ask(t, { email: "slow@example.com" });
    for (let round = 0; round < 2; round++) {
      await ask(t, { email: "slow@example.com" });
      const { code } = (await mailed(t, "slow@example.com"))!;
      const wrong = code === "000000" ? "000001" : "000000";
      for (let i = 0; i < 3; i++) await verify(t, { email: "slow@example.com", code: wrong });
    }
    // Six failures from this client: it waits, even with the right code.
    const { code } = (await mailed(t, "slow@example.com"))!;
    const held = await verify(t, { email: "slow@example.com", code });
    expectError(held, 429, "rate_limited");
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("proving the inbox of an unverified account takes it from whoever registered the address with a password", async () => {
    const t = await emailBackend();
    const squatter = await signupTenant(t, { email: "victim@example.com" });
    await ask(t, { email: "victim@example.com" });
    const got = (await mailed(t, "victim@example.com"))!;
    expect((await verify(t, { email: "victim@example.com", code: got.code })).status).toBe(200);
    expectError(await t.request("GET", "/api/v1/auth/me", { bearer: squatter.bearer }), 401, "session_ended");
    expectError(await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "victim@example.com", password: PASSWORD } }), 401, "invalid_credentials");
  });

  it("answers the same for an address that cannot sign up, and sends it nothing", async () => {
    const t = await emailBackend({}, { signupMode: "closed" });
    const res = await ask(t, { email: "nobody@example.com" });
    expect(res.status).toBe(202);
    expect(await mailed(t, "nobody@example.com")).toBeUndefined();
  });

  it.each([
    { name: "a code that is not 6 digits", body: { email: "a@example.com", code: "12ab56" } },
    { name: "both a code and a token", body: { email: "a@example.com", code: "123456", token: "esi_x" } },
    { name: "nothing", body: {} },
  ])("refuses $name with 400 invalid_request, never a session", async ({ body }) => {
    const t = await emailBackend();
    const res = await verify(t, body);
    expectError(res, 400, "invalid_request");
    expect(res.body.accessToken).toBeUndefined();
  });
});
