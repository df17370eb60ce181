import * as v from "valibot";
import type { H3Event } from "h3";
import type { Core } from "../../core.ts";
import type { Router } from "../../http/router.ts";
import { readJson } from "../../http/body.ts";
import { clientIp, noStore, requireApp, requireTenant } from "../../http/guards.ts";
import { enforceRateLimit } from "../../http/rate-limit.ts";
import { fail } from "../../errors.ts";
import { toPublicTenant } from "../tenant-view.ts";
import { mfaFactors } from "./factors.ts";
import { confirmTotp, disableTotp, startTotp } from "./totp.ts";
import { regenerateRecoveryCodes } from "./recovery-codes.ts";
import { confirmWithTicket, requireEnrolmentTicket, verifyMfa, type SecondFactorProof } from "./verify.ts";
import { reauthenticate, requireRecentAuth, type ReauthProof } from "../step-up.ts";
import { changePassword } from "../change-password.ts";
import { passkeyProof } from "../passkeys/proof.ts";
import { registerMfaAdminRoutes } from "./admin-routes.ts";
import { asTenant, auditRequest, auditSignedIn, auditTenant } from "../../audit/http.ts";

const ticket = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200));
const code = v.pipe(v.string(), v.maxLength(16));
const recoveryCode = v.pipe(v.string(), v.maxLength(32));
const passkey = v.looseObject({});
export const MfaTicketBody = v.object({ mfaTicket: v.optional(ticket) });
export const TotpConfirmBody = v.object({ code, mfaTicket: v.optional(ticket) });
export const MfaVerifyBody = v.object({ mfaTicket: ticket, code: v.optional(code), recoveryCode: v.optional(recoveryCode), passkey: v.optional(passkey) });
export const ReauthenticateBody = v.object({
  password: v.optional(v.pipe(v.string(), v.maxLength(256))),
  code: v.optional(code),
  recoveryCode: v.optional(recoveryCode),
  passkey: v.optional(passkey),
});
export const EmptyBody = v.object({});
export const ChangePasswordBody = v.object({ newPassword: v.pipe(v.string(), v.maxLength(256)) });

/** Exactly one proof of the body, else a 400 naming the choices. */
function oneProof<K extends string>(body: Partial<Record<K, unknown>>, keys: readonly K[]): K {
  const given = keys.filter((k) => body[k] !== undefined);
  if (given.length !== 1) throw fail("invalid_request", `Send exactly one of ${keys.join(", ")}${given.length ? ` (got ${given.join(" and ")})` : ""}.`);
  return given[0]!;
}

export function registerMfaRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;
  registerMfaAdminRoutes(router, core);
  // The enrolment-only ticket of an app that requires MFA stands in for the bearer (with the app key).
  const ticketHolder = async (event: H3Event, mfaTicket: string) => {
    const app = await requireApp(event, core);
    return { app, tenantId: (await requireEnrolmentTicket(core, app, mfaTicket)).tenantId };
  };

  router.get("/api/v1/auth/mfa", async (event) => {
    const auth = await requireTenant(event, core);
    const f = await mfaFactors(core, auth.app, auth.tenantId);
    return { enabled: f.totp, totp: f.totp, passkeys: f.passkeys, recoveryCodesLeft: f.recoveryCodes, required: auth.app.settings.auth.requireMfa };
  });

  // With a bearer, or with the enrolment-only ticket of an app that requires MFA.
  router.post("/api/v1/auth/mfa/totp", async (event) => {
    const body = await readJson(event, MfaTicketBody, limit);
    noStore(event);
    const { app, tenantId } = body.mfaTicket ? await ticketHolder(event, body.mfaTicket) : await requireTenant(event, core);
    const tenant = await core.db.tenants.findById(app.id, tenantId);
    if (!tenant) throw fail("session_ended", "This account no longer exists.");
    return startTotp(core, app, tenant);
  });

  router.post("/api/v1/auth/mfa/totp/confirm", async (event) => {
    const body = await readJson(event, TotpConfirmBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "mfa");
    if (body.mfaTicket) {
      const app = await requireApp(event, core);
      const { tenant, tokens, recoveryCodes, method } = await confirmWithTicket(core, app, body.mfaTicket, body.code, clientIp(event, core));
      await auditSignedIn(core, event, app.id, tenant.id, method);
      return { recoveryCodes, tenant: toPublicTenant(tenant), ...tokens };
    }
    const auth = await requireTenant(event, core);
    return confirmTotp(core, auth.app, auth.tenantId, body.code);
  });

  router.delete("/api/v1/auth/mfa/totp", async (event) => {
    const auth = await requireTenant(event, core);
    await requireRecentAuth(core, auth, "Turning two-factor authentication off");
    await disableTotp(core, auth.app, auth.tenantId);
    event.res.status = 204;
    return null;
  });

  router.post("/api/v1/auth/mfa/recovery-codes", async (event) => {
    const auth = await requireTenant(event, core);
    await readJson(event, EmptyBody, limit);
    noStore(event);
    await requireRecentAuth(core, auth, "New recovery codes");
    const codes = await regenerateRecoveryCodes(core, auth.app, auth.tenantId);
    await auditTenant(core, event, auth.app.id, "tenant.recovery_codes_regenerated", auth.tenantId);
    return codes;
  });

  router.post("/api/v1/auth/mfa/verify", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, MfaVerifyBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "mfa");
    const which = oneProof(body, ["code", "recoveryCode", "passkey"] as const);
    const proof: SecondFactorProof =
      which === "code" ? { code: body.code! } : which === "recoveryCode" ? { recoveryCode: body.recoveryCode! } : { passkey: passkeyProof(core, app, body.passkey, "passkey_sign_in") };
    const { tenant, tokens, method } = await verifyMfa(core, app, body.mfaTicket, proof, clientIp(event, core));
    await auditSignedIn(core, event, app.id, tenant.id, method);
    return { tenant: toPublicTenant(tenant), ...tokens };
  });

  router.post("/api/v1/auth/change-password", async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, ChangePasswordBody, limit);
    await changePassword(core, auth, body.newPassword);
    await auditTenant(core, event, auth.app.id, "tenant.password_changed", auth.tenantId);
    return { ok: true };
  });

  router.post("/api/v1/auth/reauthenticate", async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, ReauthenticateBody, limit);
    await enforceRateLimit(event, core, "mfa");
    const which = oneProof(body, ["password", "code", "recoveryCode", "passkey"] as const);
    const method = await reauthenticate(core, auth.app, auth, { [which]: body[which]! } as ReauthProof, clientIp(event, core));
    await auditRequest(core, event, { appId: auth.app.id, action: "tenant.reauthenticated", tenantId: auth.tenantId, actor: asTenant(auth.tenantId), details: { method } });
    const s = await core.db.mfa.sessionAuth(auth.sessionId);
    return { ok: true, authenticatedAt: new Date(s?.authenticatedAt ?? core.clock()).toISOString(), stepUpSeconds: auth.app.settings.auth.stepUpSeconds };
  });
}
