import { describe, expect, it, vi } from "vitest";
import { runCommand, type ArgsDef, type CommandDef } from "citty";
import { developerSession, expectError, signupTenant, startBackend, withCleanEnv, cliStoreEnv, type TestBackend } from "./_helpers.ts";
import { expectSessionEnded, PASSWORD, refresh } from "./_auth.ts";
import { outboxFor, tokenFromOutbox } from "./_email.ts";
import { mailerFor } from "../src/email/mailer.ts";
import type { HookEvents } from "../src/hooks.ts";
import type { Logger } from "../src/log.ts";
import mailCommand from "../src/cli/mail.ts";
import resendCommand from "../src/cli/tenant-verify.ts";
import { storeRows } from "./_store.ts";

const HOUR = 3600 * 1000;
const verify = (t: TestBackend, token: string, key = t.app.publishableKey) => t.request("POST", "/api/v1/auth/verify-email", { key, body: { token } });
const requestReset = (t: TestBackend, body: unknown, headers?: Record<string, string>) =>
  t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body, headers });
const reset = (t: TestBackend, token: string, password = "a brand new password") =>
  t.request("POST", "/api/v1/auth/reset-password", { key: t.app.publishableKey, body: { token, password } });
const login = (t: TestBackend, email: string, password: string) => t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email, password } });

describe("email verification", () => {
  it("signup sends a verification email whose default link opens tenantd's page; the token verifies once", async () => {
    const t = await startBackend({ publicUrl: "https://auth.example.com" });
    const tenant = await signupTenant(t, { email: "v@example.com" });
    const [message] = await outboxFor(t, "v@example.com");
    expect(message).toMatchObject({ kind: "verify", locale: "en", subject: `Confirm your email for ${(await t.backend.admin.getApp(t.app.id)).name}` });
    const link = new URL(message!.link!);
    expect(`${link.origin}${link.pathname}`).toBe("https://auth.example.com/auth/verify-email");
    expect(link.searchParams.get("app")).toBe(t.app.id);
    const token = link.searchParams.get("token")!;
    expect(token).toMatch(/^evt_/);
    // Only the hash is stored.
    const stored = await storeRows(t.backend).column<string>("SELECT token_hash FROM email_tokens");
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toContain(token);

    expect((await verify(t, token)).body).toEqual({ ok: true });
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).body.tenant.emailVerifiedAt).toBe(new Date(t.clock()).toISOString());
    expectError(await verify(t, token), 400, "invalid_token");
  });

  it("refuses an expired token after 24 hours, an unknown one, another app's, and a missing key", async () => {
    const t = await startBackend();
    await signupTenant(t, { email: "late@example.com" });
    const token = await tokenFromOutbox(t, "late@example.com", "verify");
    const other = await t.backend.admin.createApp({ name: "other" });
    expectError(await verify(t, token, other.publishableKey), 400, "invalid_token");
    expectError(await t.request("POST", "/api/v1/auth/verify-email", { body: { token } }), 401, "unauthorized");
    expectError(await verify(t, "evt_made_up"), 400, "invalid_token");
    expectError(await t.request("POST", "/api/v1/auth/verify-email", { key: t.app.publishableKey, body: {} }), 400, "invalid_request");
    t.clock.advance(24 * HOUR);
    const expired = await verify(t, token);
    expectError(expired, 400, "invalid_token");
    expect(expired.body.message).toContain("expired");
  });

  it("sends nothing when signup says sendEmail:false or the app delivers its own email", async () => {
    const t = await startBackend();
    await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "quiet@example.com", password: PASSWORD, sendEmail: false } });
    const created: boolean[] = [];
    t.backend.core.hooks.on("tenant.created", ({ sendEmail }) => void created.push(sendEmail));
    await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
    await signupTenant(t, { email: "own@example.com" });
    expect(await outboxFor(t, "quiet@example.com")).toEqual([]);
    expect(await outboxFor(t, "own@example.com")).toEqual([]);
    expect(created).toEqual([false]);
  });

  it("resend-verification sends a fresh token in the asked locale (kept for later emails); the older token stops working", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "again@example.com" });
    const first = await tokenFromOutbox(t, "again@example.com", "verify");
    const res = await t.request("POST", "/api/v1/auth/resend-verification", { bearer: tenant.bearer, body: { locale: "es" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const [latest] = await outboxFor(t, "again@example.com");
    expect(latest).toMatchObject({ locale: "es", subject: expect.stringMatching(/^Confirma tu correo/) });
    expectError(await verify(t, first), 400, "invalid_token");
    expect((await verify(t, new URL(latest!.link!).searchParams.get("token")!)).status).toBe(200);
    expect(await storeRows(t.backend).value("SELECT locale FROM tenants WHERE id = ?", tenant.id)).toBe("es");
    expectError(await t.request("POST", "/api/v1/auth/resend-verification", { bearer: tenant.bearer, body: {} }), 409, "already_verified");
    expectError(await t.request("POST", "/api/v1/auth/resend-verification", { body: {} }), 401, "unauthorized");
  });
});

describe("password reset", () => {
  it("answers 204 for a known and an unknown email alike, and only the account's owner gets an email", async () => {
    const t = await startBackend();
    await signupTenant(t, { email: "known@example.com" });
    const known = await requestReset(t, { email: "Known@Example.com" });
    const unknown = await requestReset(t, { email: "unknown@example.com" });
    expect([known.status, known.text]).toEqual([204, ""]);
    expect([unknown.status, unknown.text]).toEqual([204, ""]);
    expect((await outboxFor(t, "known@example.com")).map((m) => m.kind)).toEqual(["reset", "verify"]);
    expect(await outboxFor(t, "unknown@example.com")).toEqual([]);
  });

  it("gives reset tokens only to the app's server: without the secret key, or with a wrong or rotated one, 403 for every address alike", async () => {
    const t = await startBackend();
    await signupTenant(t, { email: "owner@example.com" });
    const first = await t.backend.admin.rotateAppSecretKey(t.app.id);
    const current = await t.backend.admin.rotateAppSecretKey(t.app.id);
    expect((await t.backend.admin.getApp(t.app.id)).hasSecretKey).toBe(true);
    const stored = await storeRows(t.backend).value("SELECT secret_key_hash FROM apps WHERE id = ?", t.app.id);
    expect(stored).not.toBe(current);
    for (const headers of [undefined, { "x-service-secret": "sk_wrong" }, { "x-service-secret": first }]) {
      for (const email of ["owner@example.com", "ghost@example.com"]) {
        const res = await requestReset(t, { email, sendEmail: false }, headers);
        expectError(res, 403, "forbidden");
        expect(res.body.message).toContain("x-service-secret");
        expect(res.text).not.toContain("rst_");
      }
    }
    // An app that delivers its own email asks the same of every reset request.
    await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
    expectError(await requestReset(t, { email: "owner@example.com" }), 403, "forbidden");
    expect((await outboxFor(t, "owner@example.com")).filter((m) => m.kind === "reset")).toEqual([]);
    expect((await requestReset(t, { email: "owner@example.com" }, { "x-service-secret": current })).status).toBe(200);
  });

  it("with sendEmail:false returns { resetToken, locale } for known and unknown emails alike; the decoy works nowhere", async () => {
    const t = await startBackend();
    const secret = { "x-service-secret": await t.backend.admin.rotateAppSecretKey(t.app.id) };
    await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "nl@example.com", password: PASSWORD, locale: "nl" } });
    const known = await requestReset(t, { email: "nl@example.com", sendEmail: false }, secret);
    const unknown = await requestReset(t, { email: "ghost@example.com", sendEmail: false }, { ...secret, "accept-language": "nl,en;q=0.8" });
    for (const r of [known, unknown]) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ resetToken: expect.stringMatching(/^rst_[A-Za-z0-9_-]{43}$/), locale: "nl" });
    }
    expect((await outboxFor(t, "nl@example.com")).filter((m) => m.kind === "reset")).toEqual([]);
    expectError(await reset(t, unknown.body.resetToken), 400, "invalid_token");
    expect((await reset(t, known.body.resetToken)).body).toEqual({ ok: true });
  });

  it("sets the new password, ends every session, verifies the email, and the token works once", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "r@example.com" });
    const second = await login(t, "r@example.com", PASSWORD);
    await requestReset(t, { email: "r@example.com" });
    const token = await tokenFromOutbox(t, "r@example.com", "reset");
    expect(token).toMatch(/^rst_/);
    expect((await reset(t, token)).body).toEqual({ ok: true });
    await expectSessionEnded(t, tenant);
    expectError(await refresh(t, second.body.refreshToken), 401, "session_ended");
    expectError(await login(t, "r@example.com", PASSWORD), 401, "invalid_credentials");
    const fresh = await login(t, "r@example.com", "a brand new password");
    expect(fresh.status).toBe(200);
    expect(fresh.body.tenant.emailVerifiedAt).not.toBeNull();
    const again = await reset(t, token, "yet another password");
    expectError(again, 400, "invalid_token");
    expect((await login(t, "r@example.com", "a brand new password")).status).toBe(200);
  });

  it("refuses a token after 1 hour, one replaced by a newer request, a bad password, and a missing key", async () => {
    const t = await startBackend();
    const secret = { "x-service-secret": await t.backend.admin.rotateAppSecretKey(t.app.id) };
    await signupTenant(t, { email: "x@example.com" });
    await requestReset(t, { email: "x@example.com", sendEmail: false }, secret).then((r) => r.body.resetToken);
    const first = (await requestReset(t, { email: "x@example.com", sendEmail: false }, secret)).body.resetToken;
    const second = (await requestReset(t, { email: "x@example.com", sendEmail: false }, secret)).body.resetToken;
    expectError(await reset(t, first), 400, "invalid_token");
    expectError(await reset(t, second, "short"), 400, "invalid_request");
    expectError(await reset(t, second, "x".repeat(257)), 400, "invalid_request");
    expectError(await t.request("POST", "/api/v1/auth/reset-password", { body: { token: second, password: "long enough pw" } }), 401, "unauthorized");
    t.clock.advance(HOUR);
    const expired = await reset(t, second);
    expectError(expired, 400, "invalid_token");
    expect(expired.body.message).toContain("expired");
    expect((await login(t, "x@example.com", PASSWORD)).status).toBe(200);
  });

  it("refuses a request without a valid email", async () => {
    const t = await startBackend();
    expectError(await requestReset(t, {}), 400, "invalid_request");
    expectError(await requestReset(t, { email: "not-an-email" }), 400, "invalid_request");
    expectError(await t.request("POST", "/api/v1/auth/request-password-reset", { body: { email: "a@example.com" } }), 401, "unauthorized");
  });
});

describe("developer's resend verification", () => {
  async function setup() {
    const t = await startBackend();
    const dev = await developerSession(t);
    const tenant = await signupTenant(t, { email: "t@example.com" });
    expect(await outboxFor(t, "t@example.com")).toHaveLength(1);
    const path = (appId: string, tenantId: string) => `/api/v1/admin/apps/${appId}/tenants/${tenantId}/resend-verification`;
    return { t, dev, tenant, path };
  }

  it("sends the email when tenantd delivers email", async () => {
    const { t, dev, tenant, path } = await setup();
    const res = await t.request("POST", path(t.app.id, tenant.id), { developer: dev });
    expect(res.body).toEqual({ ok: true, sentBy: "tenantd", expiresAt: new Date(t.clock() + 24 * HOUR).toISOString() });
    expect((await outboxFor(t, "t@example.com")).map((m) => m.kind)).toEqual(["verify", "verify"]);
    expect((await verify(t, await tokenFromOutbox(t, "t@example.com", "verify"))).status).toBe(200);
    expectError(await t.request("POST", path(t.app.id, tenant.id), { developer: dev }), 409, "already_verified");
  });

  it("fires tenant.verificationResent with a working token when the app delivers its own email", async () => {
    const { t, dev, tenant, path } = await setup();
    await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false, verifyUrl: "https://app.example.com/v/{token}" } } });
    const fired: HookEvents["tenant.verificationResent"][] = [];
    t.backend.core.hooks.on("tenant.verificationResent", (e) => void fired.push(e));
    const res = await t.request("POST", path(t.app.id, tenant.id), { developer: dev });
    expect(res.body.sentBy).toBe("app");
    expect(fired).toHaveLength(1);
    const e = fired[0]!;
    expect([e.app.id, e.tenant.id, e.expiresAt]).toEqual([t.app.id, tenant.id, t.clock() + 24 * HOUR]);
    expect(e.verifyUrl).toBe(`https://app.example.com/v/${e.verifyToken}`);
    expect((await outboxFor(t, "t@example.com")).length).toBe(1);
    expect((await verify(t, e.verifyToken)).status).toBe(200);
  });

  it("answers 404 for another developer's app and for a tenant of another app", async () => {
    const { t, dev, tenant, path } = await setup();
    const stranger = await developerSession(t);
    const otherApp = await t.backend.admin.createApp({ name: "mine too" });
    expectError(await t.request("POST", path(t.app.id, tenant.id), { developer: stranger }), 404, "not_found");
    expectError(await t.request("POST", path(t.app.id, "tnt_nobody"), { developer: dev }), 404, "not_found");
    expectError(await t.request("POST", path(otherApp.id, tenant.id), { developer: dev }), 404, "not_found");
    expectError(await t.request("POST", path(t.app.id, tenant.id)), 401, "unauthorized");
  });
});

async function cli<T extends ArgsDef>(cmd: CommandDef<T>, rawArgs: string[]): Promise<string> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  try {
    await withCleanEnv(() => runCommand(cmd, { rawArgs }), await cliStoreEnv(rawArgs));
  } finally {
    spy.mockRestore();
  }
  return out.join("");
}

describe("CLI", () => {
  it("tenantd mail list shows the outbox, per app, as text and JSON", async () => {
    const t = await startBackend();
    const other = await t.backend.admin.createApp({ name: "other" });
    await signupTenant(t, { email: "a@example.com" });
    await signupTenant(t, { email: "b@example.com", key: other.publishableKey, appId: other.id });
    await mailerFor(t.backend.core).idle();
    const all = JSON.parse(await cli(mailCommand, ["list", "--data-dir", t.dataDir, "--json"]));
    expect(all.messages.map((m: { to: string }) => m.to).sort()).toEqual(["a@example.com", "b@example.com"]);
    const mine = JSON.parse(await cli(mailCommand, ["list", "--data-dir", t.dataDir, "--json", "--app", other.id]));
    expect(mine.messages).toEqual([expect.objectContaining({ to: "b@example.com", kind: "verify", locale: "en", link: expect.stringContaining("token=evt_") })]);
    const text = await cli(mailCommand, ["list", "--data-dir", t.dataDir, "--app", t.app.id]);
    expect(text).toContain("to a@example.com");
    expect(text).toContain("/auth/verify-email?app=");
    expect(text).not.toContain("b@example.com");
  });

  it("tenantd tenant resend-verification sends a new email that verifies", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "c@example.com" });
    const out = JSON.parse(await cli(resendCommand, [tenant.id, "--data-dir", t.dataDir, "--json", "--app", t.app.id]));
    expect(out).toMatchObject({ ok: true, sentBy: "tenantd" });
    const messages = await outboxFor(t, "c@example.com");
    expect(messages).toHaveLength(2);
    expect((await verify(t, new URL(messages[0]!.link!).searchParams.get("token")!)).body).toEqual({ ok: true });
  });
});

describe("tenantd's own link pages", () => {
  const form = (t: TestBackend, path: string, fields: Record<string, string>) =>
    t.request("POST", path, { raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

  it("verify: the GET shows a form without using the token; the POST verifies", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "page@example.com" });
    const link = new URL((await outboxFor(t, "page@example.com"))[0]!.link!);
    const page = await t.request("GET", `${link.pathname}${link.search}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain('<form method="post">');
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).body.tenant.emailVerifiedAt).toBeNull();
    const done = await form(t, link.pathname, { app: link.searchParams.get("app")!, token: link.searchParams.get("token")! });
    expect(done.text).toContain("Email confirmed");
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).body.tenant.emailVerifiedAt).not.toBeNull();
    expect((await form(t, link.pathname, { app: t.app.id, token: link.searchParams.get("token")! })).text).toContain("already used");
  });

  it("reset: the POST sets the password; a bad link is a JSON 400", async () => {
    const t = await startBackend();
    await signupTenant(t, { email: "rp@example.com" });
    await requestReset(t, { email: "rp@example.com" });
    const link = new URL((await outboxFor(t, "rp@example.com")).find((m) => m.kind === "reset")!.link!);
    expect((await t.request("GET", `${link.pathname}${link.search}`)).text).toContain('type="password"');
    const fields = { app: t.app.id, token: link.searchParams.get("token")! };
    expect((await form(t, link.pathname, { ...fields, password: "short" })).text).toContain("8 to 256");
    expect((await form(t, link.pathname, { ...fields, password: "a page password" })).text).toContain("Password changed");
    expect((await login(t, "rp@example.com", "a page password")).status).toBe(200);
    expectError(await t.request("GET", "/auth/reset-password?app=nope&token=x"), 400, "invalid_request");
    expectError(await t.request("GET", "/auth/reset-password"), 400, "invalid_request");
  });
});

describe("development outbox log", () => {
  it("logs each email with its link and never the password", async () => {
    const lines: string[] = [];
    const logger: Logger = { info: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`), warn() {}, error: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`) };
    const t = await startBackend({ logger });
    await signupTenant(t, { email: "log@example.com", password: "secret password 1" });
    const [message] = await outboxFor(t, "log@example.com");
    expect(lines.some((l) => l.includes("log@example.com") && l.includes(message!.link!))).toBe(true);
    expect(lines.join("\n")).not.toContain("secret password 1");
  });
});

describe("development outbox order", () => {
  it("lists emails newest first in the order they were sent, so the newest verification link is the one that works", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "order@example.com" });
    const mailer = mailerFor(t.backend.core);
    const subjects = Array.from({ length: 30 }, (_, i) => `message ${i}`);
    for (const subject of subjects) {
      mailer.queue(() => ({ appId: t.app.id, tenantId: null, kind: "note", locale: "en", from: "a@example.com", to: "many@example.com", subject, text: subject, html: subject, link: null }));
    }
    expect((await outboxFor(t, "many@example.com")).map((m) => m.subject)).toEqual(subjects.toReversed());

    // Resent by the tenant, then at once by the developer: the second replaces the first's token.
    const dev = await developerSession(t);
    expect((await t.request("POST", "/api/v1/auth/resend-verification", { bearer: tenant.bearer, body: {} })).status).toBe(200);
    expect((await t.request("POST", `/api/v1/admin/apps/${t.app.id}/tenants/${tenant.id}/resend-verification`, { developer: dev })).status).toBe(200);
    expect((await outboxFor(t, "order@example.com")).map((m) => m.kind)).toEqual(["verify", "verify", "verify"]);
    expect((await verify(t, await tokenFromOutbox(t, "order@example.com", "verify"))).status).toBe(200);
  });
});
