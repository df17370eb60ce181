import { generateHOTP } from "@oslojs/otp";
import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { expect } from "vitest";
import type { TestBackend, TestTenant } from "./_helpers.ts";
import { PASSWORD } from "./_auth.ts";

/** The code an authenticator app shows for `secret` at the backend's clock, `steps` periods away. */
export function totpCode(t: TestBackend, secret: string, steps = 0): string {
  const step = Math.floor(t.clock() / 30_000) + steps;
  return generateHOTP(decodeBase32IgnorePadding(secret), BigInt(step), 6);
}

export const login = (t: TestBackend, email: string, password = PASSWORD, headers: Record<string, string> = {}) =>
  t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email, password }, headers });

export const verify = (t: TestBackend, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request("POST", "/api/v1/auth/mfa/verify", { key: t.app.publishableKey, body, headers });

/** Turns TOTP on for the tenant; returns its secret and recovery codes. */
export async function enrolTotp(t: TestBackend, tenant: TestTenant): Promise<{ secret: string; recoveryCodes: string[] }> {
  const start = await t.request("POST", "/api/v1/auth/mfa/totp", { key: t.app.publishableKey, bearer: tenant.bearer, body: {} });
  expect(start.status, start.text).toBe(200);
  const confirm = await t.request("POST", "/api/v1/auth/mfa/totp/confirm", { key: t.app.publishableKey, bearer: tenant.bearer, body: { code: totpCode(t, start.body.secret) } });
  expect(confirm.status, confirm.text).toBe(200);
  // The enrolment's code is used: the next one a test sends belongs to the next period.
  t.clock.advance(30_000);
  return { secret: start.body.secret, recoveryCodes: confirm.body.recoveryCodes };
}
