// tenantd/client: two-factor sign-in, re-authentication and passkeys (issue 42 part A).
import { describe, expect, it } from "vitest";
import type { CredentialsContainerLike, MfaChallenge, Tenant, TenantdError } from "../src/client/index.ts";
import { clientBackend, PASSWORD } from "./client-helpers.ts";
import { softAuthenticator } from "./_passkey.ts";
import { totpCode } from "./_mfa.ts";

const ORIGIN = "https://app.example.com";
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

/** navigator.credentials over the software authenticator: options arrive with bytes, as a browser takes them. */
function softCredentials(): CredentialsContainerLike & { device: ReturnType<typeof softAuthenticator> } {
  const device = softAuthenticator(ORIGIN);
  const asCredential = (json: object) => ({ toJSON: () => json });
  return {
    device,
    async create({ publicKey }) {
      const o = publicKey as { challenge: Uint8Array; rp: { id: string }; user: { id: Uint8Array } };
      return asCredential(device.create({ challenge: b64(o.challenge), rp: o.rp, user: { id: b64(o.user.id) } }));
    },
    async get({ publicKey }) {
      const o = publicKey as { challenge: Uint8Array; rpId: string };
      return asCredential(device.get({ challenge: b64(o.challenge), rpId: o.rpId }));
    },
  };
}

async function refusal(p: Promise<unknown>): Promise<TenantdError> {
  const outcome = await p.then((value) => ({ value }), (error: TenantdError) => ({ error }));
  if (!("error" in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value)}`);
  return outcome.error;
}

describe("tenantd/client: MFA and passkeys", () => {
  it("enrols TOTP, then signIn resolves to the MFA step and verifyMfa signs in", async () => {
    const { t, client } = await clientBackend();
    const c = client();
    await c.auth.signUp({ email: "ann@example.com", password: PASSWORD });
    const { secret, uri } = await c.auth.enrollTotp();
    expect(uri).toMatch(/^otpauth:/);
    const { recoveryCodes } = await c.auth.confirmTotp({ code: totpCode(t, secret) });
    expect(recoveryCodes).toHaveLength(10);
    expect(await c.auth.mfaStatus()).toMatchObject({ enabled: true, recoveryCodesLeft: 10 });
    t.clock.advance(30_000);

    const other = client();
    const step = (await other.auth.signIn({ email: "ann@example.com", password: PASSWORD })) as MfaChallenge;
    expect(step).toMatchObject({ mfaRequired: true, methods: ["totp", "recovery_code"] });
    expect(await other.auth.getSession()).toBeNull();
    const wrong = await refusal(other.auth.verifyMfa({ mfaTicket: step.mfaTicket, code: totpCode(t, secret) === "000000" ? "111111" : "000000" }));
    expect(wrong.code).toBe("invalid_credentials");
    const tenant = await other.auth.verifyMfa({ mfaTicket: step.mfaTicket, code: totpCode(t, secret) });
    expect(tenant.email).toBe("ann@example.com");
    expect(other.eventNames()).toContain("SIGNED_IN");
    expect((await other.auth.me()).email).toBe("ann@example.com");

    // A sensitive action after the window: refused with the code that says what to do, then done.
    t.clock.advance(11 * 60_000);
    expect((await refusal(other.auth.disableTotp())).code).toBe("reauthentication_required");
    await other.auth.reauthenticate({ recoveryCode: recoveryCodes[0]! });
    await other.auth.disableTotp();
    expect((await other.auth.signIn({ email: "ann@example.com", password: PASSWORD })) as Tenant).toMatchObject({ email: "ann@example.com" });
  });

  it("registers a passkey through navigator.credentials and signs in with it", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [ORIGIN] } });
    const credentials = softCredentials();
    const c = client({ credentials });
    await c.auth.signUp({ email: "bo@example.com", password: PASSWORD });
    const passkey = await c.auth.registerPasskey({ name: "Phone" });
    expect(passkey).toMatchObject({ name: "Phone", lastUsedAt: null });
    expect((await c.auth.renamePasskey(passkey.id, "My phone")).name).toBe("My phone");
    expect(await c.auth.listPasskeys()).toHaveLength(1);

    const fresh = client({ credentials });
    expect(await fresh.auth.signInWithPasskey()).toMatchObject({ email: "bo@example.com" });
    expect(await fresh.auth.signInWithPasskey({ email: "bo@example.com" })).toMatchObject({ email: "bo@example.com" });
    t.clock.advance(11 * 60_000);
    expect((await refusal(fresh.auth.removePasskey(passkey.id))).code).toBe("reauthentication_required");
    await fresh.auth.reauthenticate({ passkey: true });
    await fresh.auth.removePasskey(passkey.id);
    expect(await fresh.auth.listPasskeys()).toEqual([]);
  });
});
