import { describe, expect, it } from "vitest";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { startBackend, type TestBackend } from "./_helpers.ts";
import { startSmtp } from "./_email.ts";
import { mailerFor } from "../src/email/mailer.ts";
import type { Logger } from "../src/log.ts";

const PASSWORD = "correct horse battery";

async function smtpBackend(port: number, logger?: Logger): Promise<TestBackend> {
  const t = await startBackend({ email: { transport: "smtp", smtp: { host: "127.0.0.1", port, ignoreTLS: true }, from: "Server <server@tenantd.test>" }, ...(logger && { logger }) });
  await t.backend.admin.updateApp(t.app.id, {
    settings: {
      email: {
        appName: "Acme Notes",
        from: "Acme Notes <hello@acme.test>",
        verifyUrl: "https://acme.test/verify?t={token}",
        resetUrl: "https://acme.test/reset#token={token}",
      },
    },
  });
  return t;
}

const tokenIn = (text: string, prefix: string) => new RegExp(`${prefix.replace(/[.?#/]/g, "\\$&")}([A-Za-z0-9_-]+)`).exec(text)?.[1];

const CASES = [
  { locale: "en", verify: "Confirm your email for Acme Notes", reset: "Reset your Acme Notes password", verifyWords: "expires in 24 hours", resetWords: "expires in 1 hour" },
  { locale: "es", verify: "Confirma tu correo electrónico para Acme Notes", reset: "Restablece tu contraseña de Acme Notes", verifyWords: "caduca en 24 horas", resetWords: "caduca en 1 hora" },
  { locale: "nl", verify: "Bevestig je e-mailadres voor Acme Notes", reset: "Stel je wachtwoord voor Acme Notes opnieuw in", verifyWords: "verloopt over 24 uur", resetWords: "verloopt over 1 uur" },
] as const;

describe("email over a real SMTP server", () => {
  it.each(CASES)("sends verification and reset emails in $locale whose links carry working tokens", async (c) => {
    const smtp = await startSmtp();
    const t = await smtpBackend(smtp.port);
    const key = t.app.publishableKey;
    const email = `${c.locale}@example.com`;
    const signup = await t.request("POST", "/api/v1/auth/signup", { key, body: { email, password: PASSWORD, locale: c.locale } });
    expect(signup.status).toBe(201);

    const verifyMail = await smtp.waitFor(email);
    expect(verifyMail.subject).toBe(c.verify);
    expect(verifyMail.from).toBe("Acme Notes <hello@acme.test>");
    expect(verifyMail.text).toContain(c.verifyWords);
    const verifyToken = tokenIn(verifyMail.text, "https://acme.test/verify?t=");
    expect(verifyToken).toBeTruthy();
    expect(verifyMail.html).toContain(`href="https://acme.test/verify?t=${verifyToken}"`);
    expect((await t.request("POST", "/api/v1/auth/verify-email", { key, body: { token: verifyToken } })).body).toEqual({ ok: true });
    const me = await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: signup.body.accessToken, appId: t.app.id } });
    expect(me.body.tenant.emailVerifiedAt).toBe(new Date(t.clock()).toISOString());

    smtp.received.length = 0;
    expect((await t.request("POST", "/api/v1/auth/request-password-reset", { key, body: { email } })).status).toBe(204);
    const resetMail = await smtp.waitFor(email);
    expect(resetMail.subject).toBe(c.reset);
    expect(resetMail.text).toContain(c.resetWords);
    const resetToken = tokenIn(resetMail.text, "https://acme.test/reset#token=");
    expect(resetToken).toBeTruthy();
    const reset = await t.request("POST", "/api/v1/auth/reset-password", { key, body: { token: resetToken, password: "a brand new password" } });
    expect(reset.body).toEqual({ ok: true });
    expect((await t.request("POST", "/api/v1/auth/login", { key, body: { email, password: "a brand new password" } })).status).toBe(200);
  });

  it("falls back to English for a locale it does not have, and follows a region tag to its language", async () => {
    const smtp = await startSmtp();
    const t = await smtpBackend(smtp.port);
    for (const [locale, subject] of [["fr", CASES[0].verify], ["es-MX", CASES[1].verify], ["NL_be", CASES[2].verify]] as const) {
      const email = `${locale.toLowerCase()}@example.com`;
      await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email, password: PASSWORD, locale } });
      expect((await smtp.waitFor(email)).subject).toBe(subject);
    }
  });

  it("answers the request before a slow SMTP server has taken the email", async () => {
    let release!: () => void;
    const smtp = await startSmtp({ hold: new Promise<void>((resolve) => (release = resolve)) });
    const t = await smtpBackend(smtp.port);
    const res = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "slow@example.com", password: PASSWORD } });
    expect(res.status).toBe(201);
    expect(smtp.received).toEqual([]);
    release();
    expect((await smtp.waitFor("slow@example.com")).subject).toBe(CASES[0].verify);
  });

  it("answers the request even when the SMTP server is down, and logs the failure", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // A transport failure is a warning (issue 14): the request succeeded, the mail did not leave.
    const errors: string[] = [];
    const logger: Logger = { info() {}, warn: (m, f) => errors.push(`${m} ${JSON.stringify(f)}`), error: (m, f) => errors.push(`${m} ${JSON.stringify(f)}`) };
    const t = await smtpBackend(port, logger);
    const res = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "down@example.com", password: PASSWORD } });
    expect(res.status).toBe(201);
    expect((await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body: { email: "down@example.com" } })).status).toBe(204);
    await mailerFor(t.backend.core).idle();
    expect(errors).toHaveLength(2);
    expect(errors[0]).toContain("email not sent");
    expect(errors[0]).toContain("down@example.com");
    expect(errors.join("\n")).not.toContain(PASSWORD);
  });
});
