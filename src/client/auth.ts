import type { AuthListener, Core } from "./core.ts";
import type { AuthReply, Introspection, LinkedProvider, MfaChallenge, Session, Tenant } from "./types.ts";

export interface SignUpInput {
  email: string;
  password: string;
  locale?: string;
  /** required when the app is invite-only */
  inviteToken?: string;
}

/** Keeps the session of a sign-in reply; resolves to its tenant. */
export async function keepSession(core: Core, reply: AuthReply): Promise<Tenant> {
  const session: Session = { accessToken: reply.accessToken, refreshToken: reply.refreshToken, tenant: reply.tenant };
  await core.setSession(session, "SIGNED_IN");
  return reply.tenant;
}

/** Sign-up, sign-in, the session, and the email flows. */
export function authApi(core: Core) {
  const { request } = core;
  const signedIn = (reply: AuthReply) => keepSession(core, reply);
  return {
    /** Creates the account and signs in; resolves to the new tenant. */
    signUp: async (input: SignUpInput): Promise<Tenant> => signedIn(await request<AuthReply>("POST", "/api/v1/auth/signup", { auth: "key", body: input })),
    /**
     * Signs in; resolves to the tenant, or, when a second factor is due, to the MFA step
     * (`mfaRequired: true`): answer it with `verifyMfa`.
     */
    async signIn(input: { email: string; password: string }): Promise<Tenant | MfaChallenge> {
      const reply = await request<AuthReply | MfaChallenge>("POST", "/api/v1/auth/login", { auth: "key", body: input });
      return "mfaRequired" in reply ? reply : signedIn(reply);
    },
    /** Ends the session on the server (when it can be reached) and forgets it here in any case. */
    async signOut(): Promise<void> {
      const session = await core.getSession();
      try {
        if (session) await request("POST", "/api/v1/auth/logout", { auth: "tenant", body: { refreshToken: session.refreshToken } });
      } catch {
        // Already ended, or offline: the local sign-out below is what the person asked for.
      } finally {
        if (await core.getSession()) await core.setSession(null, "SIGNED_OUT");
      }
    },
    /** The stored session, or null when signed out. */
    getSession: (): Promise<Session | null> => core.getSession(),
    async me(): Promise<Tenant> {
      const { tenant } = await request<{ tenant: Tenant }>("GET", "/api/v1/auth/me", { auth: "tenant" });
      const session = await core.getSession();
      if (session) await core.storage.setItem(core.sessionKey, JSON.stringify({ ...session, tenant }));
      return tenant;
    },
    verifyEmail: (token: string): Promise<{ ok: true }> => request("POST", "/api/v1/auth/verify-email", { auth: "key", body: { token } }),
    resendVerification: (input: { locale?: string } = {}): Promise<{ ok: true }> => request("POST", "/api/v1/auth/resend-verification", { auth: "tenant", body: input }),
    /** Emails a reset link (the app's email settings decide the wording and URL). */
    requestPasswordReset: async (input: { email: string }): Promise<void> => {
      await request("POST", "/api/v1/auth/request-password-reset", { auth: "key", body: input });
    },
    resetPassword: (input: { token: string; password: string }): Promise<{ ok: true }> => request("POST", "/api/v1/auth/reset-password", { auth: "key", body: input }),
    /** Whether the current access token is live, as the server sees it. */
    async introspect(input: { include?: ("subscription" | "tenant")[] } = {}): Promise<Introspection> {
      const session = await core.getSession();
      return request("POST", "/api/v1/auth/introspect", { auth: "key", body: input, headers: session ? { authorization: `Bearer ${session.accessToken}` } : {} });
    },
    /** Social accounts linked to the tenant. */
    linkedProviders: async (): Promise<LinkedProvider[]> => (await request<{ providers: LinkedProvider[] }>("GET", "/api/v1/auth/providers", { auth: "tenant" })).providers,
    /**
     * Calls `listener` on every change of the session (here or, with a shared storage that
     * can tell, in another tab). Returns the function that stops it.
     */
    onAuthStateChange(listener: AuthListener): () => void {
      core.listeners.add(listener);
      let last: string | null | undefined;
      void Promise.resolve(core.storage.getItem(core.sessionKey)).then((v) => (last ??= v ?? null));
      const stop = core.storage.subscribe?.(core.sessionKey, async () => {
        const raw = (await core.storage.getItem(core.sessionKey)) ?? null;
        if (raw === last) return;
        const was = last;
        last = raw;
        const session = await core.getSession();
        listener(session ? (was ? "TOKEN_REFRESHED" : "SIGNED_IN") : "SIGNED_OUT", session);
      });
      return () => {
        core.listeners.delete(listener);
        stop?.();
      };
    },
  };
}
