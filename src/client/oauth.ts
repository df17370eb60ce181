import type { Core } from "./core.ts";
import type { Session } from "./types.ts";

export type OAuthProvider = "google" | "github" | "apple" | "microsoft" | "facebook" | "discord" | "twitter";

export type OAuthResult = { status: "success"; session: Session } | { status: "error"; error: string };

/** Where the app finds the fragment, and the history whose entry is cleaned. */
export interface RedirectLocation {
  href: string;
}
export interface HistoryLike {
  replaceState(data: unknown, unused: string, url?: string): void;
}

/** Social login: the URL to send the browser to, and the return trip's fragment. */
export function oauthApi(core: Core) {
  return {
    /** The URL that starts social login; navigate the browser (or a popup) to it. */
    oauthUrl(provider: OAuthProvider, opts: { redirect: string; inviteToken?: string }): string {
      const q = new URLSearchParams({ appId: core.options.appId, redirect: opts.redirect });
      if (opts.inviteToken) q.set("inviteToken", opts.inviteToken);
      return `${core.base}/api/v1/auth/oauth/${encodeURIComponent(provider)}?${q}`;
    },
    /**
     * Reads tenantd's fragment (`#service_oauth=…`) on the page social login returned to:
     * stores the tokens and signs in, or reports the error code. The fragment is removed
     * from the address bar and history so the tokens do not linger. Null when the
     * location carries no social-login result.
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
      const accessToken = fragment.get("service_access_token");
      const refreshToken = fragment.get("service_refresh_token");
      if (outcome !== "success" || !accessToken || !refreshToken) return { status: "error", error: fragment.get("error") ?? "provider_error" };
      const session: Session = { accessToken, refreshToken };
      await core.setSession(session, "SIGNED_IN");
      return { status: "success", session };
    },
  };
}
