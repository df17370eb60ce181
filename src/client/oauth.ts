import type { Core } from "./core.ts";
import type { Session } from "./types.ts";

/** The built-in providers, and `oidc`: the app's own OpenID Connect issuer. */
export type OAuthProvider = "google" | "github" | "apple" | "microsoft" | "facebook" | "discord" | "twitter" | "oidc";

/**
 * The return trip's outcome. Besides the server's error codes: `invalid_state` when the
 * fragment does not come from a sign-in this tab started (a crafted link), and
 * `other_tenant_signed_in` when another account is signed in here (sign out first).
 */
export type OAuthResult =
  | { status: "success"; session: Session }
  | { status: "error"; error: string }
  /** The account has two-factor authentication: answer the ticket with `auth.verifyMfa`. */
  | { status: "mfa_required"; mfaTicket: string; methods: string[] };

/** Where the app finds the fragment, and the history whose entry is cleaned. */
export interface RedirectLocation {
  href: string;
}
export interface HistoryLike {
  replaceState(data: unknown, unused: string, url?: string): void;
}

/** 32 random bytes, base64url: the value only the tab that started the flow knows. */
function newState(): string {
  const crypto = globalThis.crypto;
  if (!crypto?.getRandomValues) throw new TypeError("oauthUrl needs crypto.getRandomValues (React Native: install react-native-get-random-values).");
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The tenant an access token names (its `sub`), read without checking: only compared, never trusted. */
function tenantOf(accessToken: string): string | undefined {
  try {
    const payload = accessToken.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/");
    return (JSON.parse(atob(payload)) as { sub?: string }).sub;
  } catch {
    return undefined;
  }
}

/** Social login: the URL to send the browser to, and the return trip's fragment. */
export function oauthApi(core: Core) {
  const stateKey = `tenantd.${core.options.appId}.oauth-state`;
  return {
    /**
     * The URL that starts social login; navigate the browser (or a popup) to it. Keeps a
     * random state in `flowStorage` (this tab's sessionStorage) that the return must carry.
     */
    oauthUrl(provider: OAuthProvider, opts: { redirect: string; inviteToken?: string; upgradeToken?: string }): string {
      const state = newState();
      core.flowStorage.setItem(stateKey, state);
      const q = new URLSearchParams({ appId: core.options.appId, redirect: opts.redirect });
      if (opts.inviteToken) q.set("inviteToken", opts.inviteToken);
      // From auth.anonymousUpgradeToken(): the provider account joins this anonymous tenant.
      if (opts.upgradeToken) q.set("upgradeToken", opts.upgradeToken);
      q.set("state", state);
      return `${core.base}/api/v1/auth/oauth/${encodeURIComponent(provider)}?${q}`;
    },
    /**
     * Reads tenantd's fragment (`#service_oauth=…`) on the page social login returned to:
     * stores the tokens and signs in, or reports the error code. Tokens are taken only when
     * the fragment echoes the state of a sign-in this tab started with `oauthUrl`, and never
     * in place of another account signed in here. The fragment is removed from the address
     * bar and history so the tokens do not linger. Null when the location carries no
     * social-login result.
     */
    async handleOAuthRedirect(
      location: RedirectLocation | string = (globalThis as { location?: RedirectLocation }).location ?? "",
      history: HistoryLike | undefined = (globalThis as { history?: HistoryLike }).history,
    ): Promise<OAuthResult | null> {
      const href = typeof location === "string" ? location : location.href;
      const hash = href.indexOf("#");
      if (hash < 0) return null;
      const fragment = new URLSearchParams(href.slice(hash + 1));
      const outcome = fragment.get("service_oauth");
      if (!outcome) return null;
      history?.replaceState(null, "", href.slice(0, hash));
      // Single use: a second return (a reload, a replayed link) finds no state.
      const expected = core.flowStorage.getItem(stateKey);
      core.flowStorage.removeItem(stateKey);
      const accessToken = fragment.get("service_access_token");
      const refreshToken = fragment.get("service_refresh_token");
      const mfaTicket = fragment.get("service_mfa_ticket");
      if (outcome === "mfa_required" && mfaTicket) {
        if (!expected || fragment.get("service_state") !== expected) return { status: "error", error: "invalid_state" };
        return { status: "mfa_required", mfaTicket, methods: (fragment.get("service_mfa_methods") ?? "").split(",").filter(Boolean) };
      }
      if (outcome !== "success" || !accessToken || !refreshToken) return { status: "error", error: fragment.get("error") ?? "provider_error" };
      if (!expected || fragment.get("service_state") !== expected) return { status: "error", error: "invalid_state" };
      const current = await core.getSession();
      if (current && tenantOf(current.accessToken) !== tenantOf(accessToken)) {
        // The new session is not used: end it rather than leave it open on the server.
        await core
          .request("POST", "/api/v1/auth/logout", { headers: { authorization: `Bearer ${accessToken}`, "x-service-app": core.options.appId }, body: { refreshToken } })
          .catch(() => undefined);
        return { status: "error", error: "other_tenant_signed_in" };
      }
      const session: Session = { accessToken, refreshToken };
      await core.setSession(session, "SIGNED_IN");
      return { status: "success", session };
    },
  };
}
