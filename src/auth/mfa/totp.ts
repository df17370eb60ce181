import type { AuditActor } from "../../audit/audit.ts";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createTOTPKeyURI, generateHOTP } from "@oslojs/otp";
import { encodeBase32NoPadding } from "@oslojs/encoding";
import type { Core } from "../../core.ts";
import type { AppRow, TenantRow, TotpRow } from "../../db/types.ts";
import { fail } from "../../errors.ts";
import { newRecoveryCodes } from "./recovery-codes.ts";
import { securityEvent } from "../security-events.ts";

/** RFC 6238's defaults, the only ones every authenticator app reads. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;

const context = (tenantId: string) => `totp:${tenantId}`;
const keyOf = (core: Core, row: TotpRow) => Buffer.from(core.secrets.open(row.secretSealed, context(row.tenantId)), "base64url");

/**
 * The time step `code` belongs to, checking the current step and one on either side (clocks
 * drift); null when it matches none. Each candidate is compared in constant time.
 */
export function matchStep(key: Uint8Array, code: string, now: number): number | null {
  const given = Buffer.from(code.replace(/\s/g, ""));
  if (given.length !== TOTP_DIGITS) return null;
  const current = Math.floor(now / 1000 / TOTP_PERIOD_SECONDS);
  let found: number | null = null;
  for (const step of [current - 1, current, current + 1]) {
    const expected = Buffer.from(generateHOTP(key, BigInt(step), TOTP_DIGITS));
    if (timingSafeEqual(given, expected) && found === null) found = step;
  }
  return found;
}

/** Starts (or restarts) TOTP enrolment: a new secret, shown once, active after its first code. */
export async function startTotp(core: Core, app: AppRow, tenant: TenantRow): Promise<{ secret: string; uri: string; period: number; digits: number }> {
  const key = randomBytes(20);
  const started = await core.db.mfa.startTotp({
    tenantId: tenant.id,
    appId: app.id,
    secretSealed: core.secrets.seal(key.toString("base64url"), context(tenant.id)),
    confirmedAt: null,
    lastStep: null,
    createdAt: core.clock(),
  });
  if (!started) throw fail("conflict", "Two-factor authentication is already on for this account. Turn it off first to move it to another authenticator.");
  const issuer = app.settings.email.appName ?? app.name;
  return { secret: encodeBase32NoPadding(key), uri: createTOTPKeyURI(issuer, tenant.email, key, TOTP_PERIOD_SECONDS, TOTP_DIGITS), period: TOTP_PERIOD_SECONDS, digits: TOTP_DIGITS };
}

/** Confirms the enrolment with the authenticator's first code; MFA is on, and the recovery codes are shown once. */
export async function confirmTotp(core: Core, app: AppRow, tenantId: string, code: string): Promise<{ recoveryCodes: string[] }> {
  const row = await core.db.mfa.totp(app.id, tenantId);
  if (!row) throw fail("invalid_request", "No two-factor enrolment is waiting: start one with POST /api/v1/auth/mfa/totp.");
  if (row.confirmedAt !== null) throw fail("conflict", "Two-factor authentication is already on for this account.");
  const step = matchStep(keyOf(core, row), code, core.clock());
  if (step === null) throw fail("invalid_credentials", "Wrong code. Enter the 6-digit code your authenticator app shows now (check the device's clock).");
  const codes = newRecoveryCodes(core);
  if (!(await core.db.mfa.confirmTotp(app.id, tenantId, step, codes.hashes, core.clock()))) {
    throw fail("conflict", "Two-factor authentication is already on for this account.");
  }
  await securityEvent(core, app, tenantId, "mfa.enabled", { method: "totp" });
  return { recoveryCodes: codes.codes };
}

/**
 * Checks a code of the tenant's confirmed TOTP. A code is accepted once: its step, and every
 * earlier one, is refused afterwards, so a code seen over a shoulder cannot be replayed.
 */
export async function checkTotp(core: Core, app: AppRow, tenantId: string, code: string): Promise<void> {
  const row = await core.db.mfa.totp(app.id, tenantId);
  if (!row || row.confirmedAt === null) throw fail("invalid_request", "Two-factor authentication is not on for this account: use another method.");
  const step = matchStep(keyOf(core, row), code, core.clock());
  if (step === null) throw fail("invalid_credentials", "Wrong authenticator code.");
  if (!(await core.db.mfa.useTotpStep(app.id, tenantId, step))) {
    throw fail("invalid_credentials", "This authenticator code was already used. Wait for the next code and enter that one.");
  }
}

/** Turns TOTP off and drops the recovery codes (the route checks the step-up first). */
export async function disableTotp(core: Core, app: AppRow, tenantId: string, actor?: AuditActor): Promise<void> {
  if (!(await core.db.mfa.disableTotp(app.id, tenantId))) throw fail("not_found", "Two-factor authentication is not on for this account.");
  await securityEvent(core, app, tenantId, "mfa.disabled", { method: "totp" }, actor);
}
