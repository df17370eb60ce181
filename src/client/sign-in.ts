import type { Core } from "./core.ts";
import type { AuthReply, Tenant } from "./types.ts";
import { keepSession } from "./auth.ts";
import type { HistoryLike, RedirectLocation } from "./oauth.ts";

/** Email codes and magic links, and anonymous tenants (`client.auth`). */
export function signInApi(core: Core) {
  const { request } = core;
  return {
    /**
     * Emails a 6-digit code, and a link to `redirectUrl` (a page on the app's redirect
     * allow-list) when given. Resolves the same whether or not the address has an account.
     */
    sendEmailSignIn: (input: { email: string; redirectUrl?: string; locale?: string }): Promise<{ ok: true; expiresIn: number }> =>
      request("POST", "/api/v1/auth/email-sign-in", { auth: "key", body: input }),
    /** Signs in (or up) with the code from the email. */
    verifyEmailCode: async (input: { email: string; code: string }): Promise<Tenant> =>
      keepSession(core, await request<AuthReply>("POST", "/api/v1/auth/email-sign-in/verify", { auth: "key", body: input })),
    /**
     * On the page the email's link opened: signs in with the link's token (`#service_email_token=…`)
     * and removes it from the address bar and history. Null when the location carries none.
     */
    async handleEmailSignInRedirect(
      location: RedirectLocation | string = (globalThis as { location?: RedirectLocation }).location ?? "",
      history: HistoryLike | undefined = (globalThis as { history?: HistoryLike }).history,
    ): Promise<Tenant | null> {
      const href = typeof location === "string" ? location : location.href;
      const hash = href.indexOf("#");
      const token = hash < 0 ? null : new URLSearchParams(href.slice(hash + 1)).get("service_email_token");
      if (!token) return null;
      history?.replaceState(null, "", href.slice(0, hash));
      return keepSession(core, await request<AuthReply>("POST", "/api/v1/auth/email-sign-in/verify", { auth: "key", body: { token } }));
    },
    /** Signs in as a new tenant without an email (the app setting auth.anonymous). */
    signInAnonymously: async (input: { locale?: string } = {}): Promise<Tenant> =>
      keepSession(core, await request<AuthReply>("POST", "/api/v1/auth/anonymous", { auth: "key", body: input })),
    /** Gives the anonymous tenant an email and a password; same id, session and data. */
    async upgradeAnonymous(input: { email: string; password: string; locale?: string }): Promise<Tenant> {
      const { tenant } = await request<{ tenant: Tenant }>("POST", "/api/v1/auth/anonymous/upgrade", { auth: "tenant", body: input });
      const session = await core.getSession();
      if (session) await core.storage.setItem(core.sessionKey, JSON.stringify({ ...session, tenant }));
      return tenant;
    },
    /** A 15-minute token for `oauthUrl(provider, { upgradeToken })`: social login then upgrades this anonymous tenant. */
    anonymousUpgradeToken: (): Promise<{ upgradeToken: string; expiresIn: number }> => request("POST", "/api/v1/auth/anonymous/upgrade-token", { auth: "tenant" }),
  };
}
