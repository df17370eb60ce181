import * as v from "valibot";
import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import { enforceRateLimit } from "../http/rate-limit.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readLimited } from "../http/body.ts";
import { requireTenant } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";
import { SIGN_IN_PROVIDERS, type OAuthProviderName } from "../apps/settings.ts";
import { finishOAuth, startOAuth, type BrowserStep, type CallbackInput } from "./flow.ts";
import { cookieName, readCookie } from "./cookie.ts";
import { PROVIDERS } from "./providers.ts";
import { requestOrigin } from "../audit/http.ts";

const param = v.pipe(v.string(), v.maxLength(2048));
export const StartQuery = v.object({
  appId: v.pipe(v.string("appId is required"), v.minLength(1, "appId is required"), v.maxLength(100)),
  redirect: v.optional(param),
  inviteToken: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  /** An anonymous tenant's upgrade token (POST /auth/anonymous/upgrade-token): the provider account is linked to it. */
  upgradeToken: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(400))),
  /** The app's own random value for this flow, echoed as `service_state` in the fragment (tenantd/client sets and checks it). */
  state: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{16,128}$/, "state must be 16 to 128 characters of A-Z, a-z, 0-9, - and _"))),
});
export const CallbackParams = v.object({
  state: v.optional(param),
  code: v.optional(param),
  error: v.optional(param),
  user: v.optional(v.pipe(v.string(), v.maxLength(4096))),
  iss: v.optional(param),
});
/** Apple's form post is small (code, state, id_token, user); anything bigger is not Apple. */
const FORM_LIMIT = 64 * 1024;

function providerOf(event: H3Event): OAuthProviderName {
  const name = getRouterParam(event, "provider") ?? "";
  if (!(SIGN_IN_PROVIDERS as readonly string[]).includes(name)) {
    throw fail("not_found", `Unknown sign-in provider "${name}". Known: ${SIGN_IN_PROVIDERS.join(", ")}.`);
  }
  return name as OAuthProviderName;
}

/** A 302 that no cache keeps and no page can read the tokens from through a referrer. */
function redirectTo(step: BrowserStep): Response {
  return new Response(null, {
    status: 302,
    headers: { location: step.location, "set-cookie": step.cookie, "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });
}

function callbackInput(event: H3Event, provider: OAuthProviderName, raw: Record<string, unknown>): CallbackInput {
  const p = parseInput(CallbackParams, raw, "callback");
  return {
    state: p.state,
    code: p.code,
    error: p.error,
    extras: { appleUser: p.user, iss: p.iss },
    browser: readCookie(event.req.headers.get("cookie"), cookieName(provider)),
  };
}

export function registerOAuthRoutes(router: Router, core: Core): void {
  router.get("/api/v1/auth/oauth/:provider", async (event) => {
    const provider = providerOf(event);
    const q = parseInput(StartQuery, getQuery(event), "query");
    // Each start writes a state row: counted per IP like the other unauthenticated flows.
    await enforceRateLimit(event, core, "oauth-start", { appId: q.appId });
    return redirectTo(await startOAuth(core, provider, q));
  });

  router.get("/api/v1/auth/oauth/:provider/callback", async (event) => {
    const provider = providerOf(event);
    return redirectTo(await finishOAuth(core, provider, { ...callbackInput(event, provider, getQuery(event)), origin: requestOrigin(event, core) }));
  });

  // Apple answers with response_mode=form_post: a browser form POST from appleid.apple.com.
  router.post("/api/v1/auth/oauth/:provider/callback", async (event) => {
    const provider = providerOf(event);
    if (!PROVIDERS[provider].formPost) throw fail("method_not_allowed", `${provider} returns to the callback with GET.`, { allow: "GET" });
    const type = event.req.headers.get("content-type") ?? "";
    if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
      throw fail("unsupported_media_type", "The sign-in callback accepts a form post (application/x-www-form-urlencoded) only.");
    }
    const form = Object.fromEntries(new URLSearchParams(await readLimited(event, FORM_LIMIT)));
    return redirectTo(await finishOAuth(core, provider, { ...callbackInput(event, provider, form), origin: requestOrigin(event, core) }));
  });

  router.get("/api/v1/auth/providers", async (event) => {
    const auth = await requireTenant(event, core);
    const linked = await core.db.oauth.listForTenant(auth.app.id, auth.tenantId);
    return { providers: linked.map((l) => ({ provider: l.provider, linkedAt: toIso(l.linkedAt), email: l.email })) };
  });
}
