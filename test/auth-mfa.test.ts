// Issue 42 part A: TOTP MFA, recovery codes and the MFA ticket of login.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { runMaintenance } from "../src/maintenance.ts";
import { expectError, signupTenant, startBackend } from "./_helpers.ts";
import { PASSWORD } from "./_auth.ts";
import { enrolTotp, login, totpCode, verify } from "./_mfa.ts";
import { outboxFor } from "./_email.ts";

describe("TOTP enrolment", () => {
  it("starts with a secret and an otpauth URI, and is on only after a first right code", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const start = await t.request("POST", "/api/v1/auth/mfa/totp", { key: t.app.publishableKey, bearer: tenant.bearer, body: {} });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({ period: 30, digits: 6 });
    expect(start.body.uri).toMatch(/^otpauth:\/\/totp\/.+secret=[A-Z2-7]+/);
    expect((await t.request("GET", "/api/v1/auth/mfa", { bearer: tenant.bearer })).body).toMatchObject({ enabled: false });
    // Not on yet: login still answers tokens.
    expect((await login(t, tenant.email)).body.accessToken).toBeTypeOf("string");

    const wrong = await t.request("POST", "/api/v1/auth/mfa/totp/confirm", { bearer: tenant.bearer, body: { code: "000000" } });
    expectError(wrong, 401, "invalid_credentials");
    const confirm = await t.request("POST", "/api/v1/auth/mfa/totp/confirm", { bearer: tenant.bearer, body: { code: totpCode(t, start.body.secret) } });
    expect(confirm.status).toBe(200);
    expect(confirm.body.recoveryCodes).toHaveLength(10);
    expect(new Set(confirm.body.recoveryCodes).size).toBe(10);
    expect((await t.request("GET", "/api/v1/auth/mfa", { bearer: tenant.bearer })).body).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });
    // A second enrolment while on is refused.
    expectError(await t.request("POST", "/api/v1/auth/mfa/totp", { bearer: tenant.bearer, key: t.app.publishableKey, body: {} }), 409, "conflict");
  });

  it("stores the secret sealed and the recovery codes hashed", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret, recoveryCodes } = await enrolTotp(t, tenant);
    const row = await t.backend.core.db.mfa.totp(t.app.id, tenant.id);
    expect(row!.secretSealed).not.toContain(secret);
    expect(row!.secretSealed.startsWith("enc:")).toBe(true);
    expect(await t.backend.core.db.mfa.recoveryCodesLeft(tenant.id)).toBe(10);
    // Neither the code nor its bare SHA-256 is what the table holds.
    for (const code of recoveryCodes) {
      expect(await t.backend.core.db.mfa.useRecoveryCode(tenant.id, code, t.clock())).toBeNull();
      expect(await t.backend.core.db.mfa.useRecoveryCode(tenant.id, createHash("sha256").update(code.replace("-", "")).digest("hex"), t.clock())).toBeNull();
    }
    expect(await t.backend.core.db.mfa.recoveryCodesLeft(tenant.id)).toBe(10);
  });
});

describe("login with MFA on", () => {
  it("answers a single-use ticket, not tokens; the ticket and a code give the tokens", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    const first = await login(t, tenant.email);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ mfaRequired: true, mfaTicket: expect.stringMatching(/^mft_/), methods: ["totp", "recovery_code"], enrollmentRequired: false, expiresIn: 300 });
    expect(first.body.accessToken).toBeUndefined();

    const ok = await verify(t, { mfaTicket: first.body.mfaTicket, code: totpCode(t, secret) });
    expect(ok.status).toBe(200);
    expect(ok.body.tenant.id).toBe(tenant.id);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: ok.body.accessToken, appId: t.app.id } })).status).toBe(200);

    // The ticket is used up; the same code, even on a new ticket, is refused (reused in its window).
    expectError(await verify(t, { mfaTicket: first.body.mfaTicket, code: totpCode(t, secret, 1) }), 400, "invalid_token");
    const second = await login(t, tenant.email);
    const replay = await verify(t, { mfaTicket: second.body.mfaTicket, code: totpCode(t, secret) });
    expectError(replay, 401, "invalid_credentials");
    expect(replay.body.message).toMatch(/already used/);
    // An older code of the window is refused too; the next one works.
    expectError(await verify(t, { mfaTicket: second.body.mfaTicket, code: totpCode(t, secret, -1) }), 401, "invalid_credentials");
    expect((await verify(t, { mfaTicket: second.body.mfaTicket, code: totpCode(t, secret, 1) })).status).toBe(200);
  });

  it("refuses expired, unknown and foreign tickets, and bad bodies, each with a clear error", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    const { body } = await login(t, tenant.email);
    expectError(await verify(t, { mfaTicket: "mft_nope", code: "123456" }), 400, "invalid_token");
    expectError(await verify(t, { mfaTicket: body.mfaTicket }), 400, "invalid_request");
    expectError(await verify(t, { mfaTicket: body.mfaTicket, code: "123456", recoveryCode: "x" }), 400, "invalid_request");
    expectError(await verify(t, { mfaTicket: body.mfaTicket, code: 123456 }), 400, "invalid_request");
    // Another app's key does not know this app's ticket.
    const other = await t.backend.admin.createApp({ name: "other" });
    const foreign = await t.request("POST", "/api/v1/auth/mfa/verify", { key: other.publishableKey, body: { mfaTicket: body.mfaTicket, code: totpCode(t, secret) } });
    expectError(foreign, 400, "invalid_token");
    t.clock.advance(5 * 60_000 + 1);
    const expired = await verify(t, { mfaTicket: body.mfaTicket, code: totpCode(t, secret) });
    expectError(expired, 400, "invalid_token");
    expect(expired.body.message).toMatch(/expired/);
    // Housekeeping drops it an hour after it expired.
    const hash = createHash("sha256").update(body.mfaTicket).digest("hex");
    t.clock.advance(60 * 60_000);
    await runMaintenance(t.backend.core);
    expect(await t.backend.core.db.mfa.peekChallenge(hash, t.app.id, "mfa_ticket", t.clock())).toEqual({ ok: false, reason: "unknown" });
  });

  it("a ticket takes five wrong codes, then stops working even for the right one", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    const { body } = await login(t, tenant.email);
    const right = totpCode(t, secret);
    const wrong = right === "111111" ? "222222" : "111111";
    for (let i = 4; i >= 0; i--) {
      const r = await verify(t, { mfaTicket: body.mfaTicket, code: wrong });
      expectError(r, 401, "invalid_credentials");
      expect(r.body.message).toContain(i > 0 ? `${i} attempt` : "no longer works");
    }
    expectError(await verify(t, { mfaTicket: body.mfaTicket, code: right }), 400, "invalid_token");
  });

  it("wrong codes across fresh tickets meet the account's backoff (429 with retry-after)", async () => {
    const t = await startBackend({ rateLimit: { windowSeconds: 60, perIp: 10_000, perEmail: 10_000 } });
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const { body } = await login(t, tenant.email);
      statuses.push((await verify(t, { mfaTicket: body.mfaTicket, code: totpCode(t, secret) === "111111" ? "222222" : "111111" })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const { body } = await login(t, tenant.email);
    const waiting = await verify(t, { mfaTicket: body.mfaTicket, code: totpCode(t, secret) });
    expectError(waiting, 429, "rate_limited");
    expect(waiting.body.message).toMatch(/wrong codes/);
    expect(Number(waiting.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("recovery codes", () => {
  it("each signs in once in place of a code, tells the tenant, and can be regenerated", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { recoveryCodes, secret } = await enrolTotp(t, tenant);
    const { body } = await login(t, tenant.email);
    expect((await verify(t, { mfaTicket: body.mfaTicket, recoveryCode: recoveryCodes[0]!.toUpperCase() })).status).toBe(200);
    const again = await login(t, tenant.email);
    expectError(await verify(t, { mfaTicket: again.body.mfaTicket, recoveryCode: recoveryCodes[0] }), 401, "invalid_credentials");
    expect((await t.request("GET", "/api/v1/auth/mfa", { bearer: tenant.bearer })).body.recoveryCodesLeft).toBe(9);
    const mails = await outboxFor(t, tenant.email);
    expect(mails.map((m) => m.kind)).toEqual(expect.arrayContaining(["security:mfa.enabled", "security:mfa.recovery_code_used"]));

    // Regenerating is a sensitive action: a fresh sign-in is needed after the window.
    t.clock.advance(11 * 60_000);
    expectError(await t.request("POST", "/api/v1/auth/mfa/recovery-codes", { bearer: tenant.bearer, body: {} }), 403, "reauthentication_required");
    const re = await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body: { code: totpCode(t, secret) } });
    expect(re.status, re.text).toBe(200);
    const fresh = await t.request("POST", "/api/v1/auth/mfa/recovery-codes", { bearer: tenant.bearer, body: {} });
    expect(fresh.status).toBe(200);
    expect(fresh.body.recoveryCodes).toHaveLength(10);
    const third = await login(t, tenant.email);
    expectError(await verify(t, { mfaTicket: third.body.mfaTicket, recoveryCode: recoveryCodes[1] }), 401, "invalid_credentials");
    expect((await verify(t, { mfaTicket: third.body.mfaTicket, recoveryCode: fresh.body.recoveryCodes[1] })).status).toBe(200);
  });
});

describe("turning MFA off", () => {
  it("needs a recent sign-in, then login answers tokens again", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    await enrolTotp(t, tenant);
    t.clock.advance(10 * 60_000 + 1);
    const refused = await t.request("DELETE", "/api/v1/auth/mfa/totp", { bearer: tenant.bearer });
    expectError(refused, 403, "reauthentication_required");
    expect(refused.body.message).toContain("POST /api/v1/auth/reauthenticate");
    expectError(await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body: { password: "wrong password" } }), 401, "invalid_credentials");
    expect((await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body: { password: PASSWORD } })).status).toBe(200);
    expect((await t.request("DELETE", "/api/v1/auth/mfa/totp", { bearer: tenant.bearer })).status).toBe(204);
    expect((await login(t, tenant.email)).body.accessToken).toBeTypeOf("string");
    expect((await outboxFor(t, tenant.email)).map((m) => m.kind)).toContain("security:mfa.disabled");
  });
});

describe("settings.auth.requireMfa", () => {
  it("a tenant without MFA gets a ticket that only allows enrolment, and enrolling signs it in", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { requireMfa: true } } });
    const tenant = await signupTenant(t);
    const first = await login(t, tenant.email);
    expect(first.body).toMatchObject({ mfaRequired: true, methods: [], enrollmentRequired: true });
    const ticket = first.body.mfaTicket;
    expectError(await verify(t, { mfaTicket: ticket, code: "123456" }), 400, "invalid_request");
    const start = await t.request("POST", "/api/v1/auth/mfa/totp", { key: t.app.publishableKey, body: { mfaTicket: ticket } });
    expect(start.status).toBe(200);
    const done = await t.request("POST", "/api/v1/auth/mfa/totp/confirm", { key: t.app.publishableKey, body: { mfaTicket: ticket, code: totpCode(t, start.body.secret) } });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ tenant: { id: tenant.id }, recoveryCodes: expect.any(Array), accessToken: expect.any(String) });
    // Used up.
    expectError(await t.request("POST", "/api/v1/auth/mfa/totp/confirm", { key: t.app.publishableKey, body: { mfaTicket: ticket, code: totpCode(t, start.body.secret, 1) } }), 400, "invalid_token");
    expect((await login(t, tenant.email)).body).toMatchObject({ mfaRequired: true, methods: ["totp", "recovery_code"], enrollmentRequired: false });
  });
});
