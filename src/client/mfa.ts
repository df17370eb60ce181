import type { Core } from "./core.ts";
import type { AuthReply, MfaChallenge, MfaStatus, Passkey, Reauthenticated, Session, Tenant, TotpEnrolment } from "./types.ts";

/** What `navigator.credentials` offers; pass your own outside a browser (tests, native bridges). */
export interface CredentialsContainerLike {
  create(options: { publicKey: unknown }): Promise<unknown>;
  get(options: { publicKey: unknown }): Promise<unknown>;
}

/** One proof of a second factor or of a re-authentication. */
export type SecondFactor = { code: string } | { recoveryCode: string } | { passkey: true };

const toBytes = (b64url: string) => Uint8Array.from(atob(b64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(b64url.length / 4) * 4, "=")), (c) => c.charCodeAt(0));
const toB64url = (buf: ArrayBuffer | ArrayBufferView | null | undefined): string | undefined => {
  if (!buf) return undefined;
  const bytes = buf instanceof ArrayBuffer ? new Uint8Array(buf) : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

type Json = Record<string, any>;
const withIds = (list: Json[] | undefined) => list?.map((c) => ({ ...c, id: toBytes(c.id as string) }));

/** A PublicKeyCredential as the JSON the server reads (what `toJSON()` gives where browsers have it). */
function credentialJson(c: Json): Json {
  if (typeof c.toJSON === "function") return c.toJSON() as Json;
  const r = c.response as Json;
  return {
    id: c.id,
    rawId: toB64url(c.rawId),
    type: c.type,
    authenticatorAttachment: c.authenticatorAttachment ?? null,
    clientExtensionResults: typeof c.getClientExtensionResults === "function" ? c.getClientExtensionResults() : {},
    response: {
      clientDataJSON: toB64url(r.clientDataJSON),
      ...(r.attestationObject
        ? { attestationObject: toB64url(r.attestationObject), transports: typeof r.getTransports === "function" ? r.getTransports() : [] }
        : { authenticatorData: toB64url(r.authenticatorData), signature: toB64url(r.signature), userHandle: toB64url(r.userHandle) ?? null }),
    },
  };
}

/** Two-factor authentication, passkeys and step-up (docs/auth.md). Part of `client.auth`. */
export function mfaApi(core: Core, credentials?: CredentialsContainerLike) {
  const { request } = core;
  const container = () => credentials ?? (globalThis as { navigator?: { credentials?: CredentialsContainerLike } }).navigator?.credentials;
  const browser = () => {
    const c = container();
    if (!c) throw new Error("tenantd/client: passkeys need navigator.credentials (a browser) or the `credentials` option.");
    return c;
  };
  const signedIn = async (reply: AuthReply): Promise<Tenant> => {
    const session: Session = { accessToken: reply.accessToken, refreshToken: reply.refreshToken, tenant: reply.tenant };
    await core.setSession(session, "SIGNED_IN");
    return reply.tenant;
  };
  /** Runs `navigator.credentials.get()` on options the server issued. */
  const assert = async (options: Json): Promise<Json> =>
    credentialJson((await browser().get({ publicKey: { ...options, challenge: toBytes(options.challenge), allowCredentials: withIds(options.allowCredentials) } })) as Json);
  // Re-authentication options are the signed-in tenant's (bearer); sign-in options need the app key.
  const passkeyProof = async (body: Json) =>
    assert(await request<Json>("POST", "/api/v1/auth/passkeys/options", { auth: body.purpose === "reauthenticate" ? "tenant" : "key", body }));
  const proof = async (f: SecondFactor, options: Json): Promise<Json> => ("passkey" in f ? { passkey: await passkeyProof(options) } : f);

  return {
    /** The tenant's second factors. */
    mfaStatus: (): Promise<MfaStatus> => request("GET", "/api/v1/auth/mfa", { auth: "tenant" }),
    /** Starts TOTP enrolment (show `uri` as a QR code); with the ticket of an app that requires MFA when signed out. */
    enrollTotp: (input: { mfaTicket?: string } = {}): Promise<TotpEnrolment> =>
      request("POST", "/api/v1/auth/mfa/totp", { auth: input.mfaTicket ? "key" : "tenant", body: input }),
    /** Confirms TOTP with the first code; resolves to the recovery codes (show them once). With a ticket, also signs in. */
    async confirmTotp(input: { code: string; mfaTicket?: string }): Promise<{ recoveryCodes: string[] }> {
      const reply = await request<{ recoveryCodes: string[] } & Partial<AuthReply>>("POST", "/api/v1/auth/mfa/totp/confirm", { auth: input.mfaTicket ? "key" : "tenant", body: input });
      if (reply.accessToken) await signedIn(reply as AuthReply);
      return { recoveryCodes: reply.recoveryCodes };
    },
    /** Turns TOTP off (a recent sign-in is needed: `reauthenticate` first when refused). */
    disableTotp: async (): Promise<void> => void (await request("DELETE", "/api/v1/auth/mfa/totp", { auth: "tenant" })),
    regenerateRecoveryCodes: (): Promise<{ recoveryCodes: string[] }> => request("POST", "/api/v1/auth/mfa/recovery-codes", { auth: "tenant", body: {} }),
    /** Answers the ticket `signIn` returned with a code, a recovery code or a passkey; signs in. */
    verifyMfa: async (input: { mfaTicket: string } & SecondFactor): Promise<Tenant> => {
      const { mfaTicket, ...factor } = input;
      const body = { mfaTicket, ...(await proof(factor as SecondFactor, { mfaTicket })) };
      return signedIn(await request<AuthReply>("POST", "/api/v1/auth/mfa/verify", { auth: "key", body }));
    },
    /** Proves it is you again, for a sensitive action refused with `reauthentication_required`. */
    reauthenticate: async (input: { password: string } | SecondFactor): Promise<Reauthenticated> => {
      const body = "password" in input ? input : await proof(input, { purpose: "reauthenticate" });
      return request("POST", "/api/v1/auth/reauthenticate", { auth: "tenant", body });
    },
    changePassword: (input: { newPassword: string }): Promise<{ ok: true }> => request("POST", "/api/v1/auth/change-password", { auth: "tenant", body: input }),

    /** Creates a passkey on this device (`navigator.credentials.create()`) and registers it. */
    async registerPasskey(input: { name?: string } = {}): Promise<Passkey> {
      const o = await request<Json>("POST", "/api/v1/auth/passkeys/register/options", { auth: "tenant", body: {} });
      const created = await browser().create({ publicKey: { ...o, challenge: toBytes(o.challenge), user: { ...o.user, id: toBytes(o.user.id) }, excludeCredentials: withIds(o.excludeCredentials) } });
      const reply = await request<{ passkey: Passkey }>("POST", "/api/v1/auth/passkeys/register", { auth: "tenant", body: { credential: credentialJson(created as Json), ...input } });
      return reply.passkey;
    },
    listPasskeys: async (): Promise<Passkey[]> => (await request<{ passkeys: Passkey[] }>("GET", "/api/v1/auth/passkeys", { auth: "tenant" })).passkeys,
    renamePasskey: async (id: string, name: string): Promise<Passkey> =>
      (await request<{ passkey: Passkey }>("PATCH", `/api/v1/auth/passkeys/${encodeURIComponent(id)}`, { auth: "tenant", body: { name } })).passkey,
    removePasskey: async (id: string): Promise<void> => void (await request("DELETE", `/api/v1/auth/passkeys/${encodeURIComponent(id)}`, { auth: "tenant" })),
    /** Signs in with a passkey: the browser offers the ones it holds, or those of `email`. */
    async signInWithPasskey(input: { email?: string } = {}): Promise<Tenant | MfaChallenge> {
      const credential = await passkeyProof(input);
      const reply = await request<AuthReply | MfaChallenge>("POST", "/api/v1/auth/passkeys/sign-in", { auth: "key", body: { credential } });
      return "mfaRequired" in reply ? reply : signedIn(reply);
    },
  };
}
