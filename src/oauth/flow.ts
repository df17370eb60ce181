import { generateCodeVerifier, generateState } from "arctic";
import { HTTPError } from "h3";
import type { Core } from "../core.ts";
import type { OAuthProviderName } from "../apps/settings.ts";
import { constantTimeEqual, hashToken, newToken } from "../crypto/random.ts";
import { fail, type ErrorCode } from "../errors.ts";
import { PROVIDERS, providerConfig } from "./providers.ts";
import { readIdentity, type CallbackExtras, type Identity } from "./identity.ts";
import { allowedRedirect, withFragment } from "./redirect.ts";
import { bindingCookie } from "./cookie.ts";
import { signIn } from "./sign-in.ts";
import { isUpgradeToken, readUpgradeToken, upgradeWithProvider } from "../auth/anonymous.ts";
import { auditSignIn } from "../audit/install.ts";
import type { AuditOrigin } from "../audit/audit.ts";

export const STATE_TTL_MS = 10 * 60 * 1000;

export interface BrowserStep {
  location: string;
  /** Set-Cookie value: the binding cookie on start, its removal on callback. */
  cookie: string;
}

function cookieFor(core: Core, provider: OAuthProviderName, value: string, maxAgeSeconds: number): string {
  const base = new URL(core.config.publicUrl);
  return bindingCookie({
    provider,
    value,
    path: `${base.pathname.replace(/\/$/, "")}/api/v1/auth/oauth/${provider}`,
    secure: base.protocol === "https:",
    crossSitePost: PROVIDERS[provider].formPost,
    maxAgeSeconds,
  });
}

export async function startOAuth(
  core: Core,
  provider: OAuthProviderName,
  input: { appId: string; redirect?: string; inviteToken?: string; upgradeToken?: string; state?: string },
): Promise<BrowserStep> {
  const app = await core.db.apps.findById(input.appId);
  if (!app) throw fail("not_found", `No app with id ${input.appId}.`);
  if (input.upgradeToken !== undefined) {
    if (input.inviteToken !== undefined) throw fail("invalid_request", "Give inviteToken or upgradeToken, not both: an upgrade keeps the anonymous account.");
    readUpgradeToken(core, app, input.upgradeToken);
  }
  const redirect = allowedRedirect(app, input.redirect);
  const config = providerConfig(core, app, provider);
  const def = PROVIDERS[provider];
  const state = generateState();
  const verifier = def.pkce ? generateCodeVerifier() : null;
  const binding = newToken();
  const now = core.clock();
  const location = (await def.authorizationUrl(config, state, verifier, config.scopes ?? def.scopes)).href;
  await core.db.oauth.createState({
    stateHash: hashToken(state),
    appId: app.id,
    provider,
    redirectUrl: redirect,
    // The sealed token of the flow: an invite, or an anonymous tenant's upgrade token (aup_…).
    inviteToken: (input.upgradeToken ?? input.inviteToken) ? core.secrets.seal((input.upgradeToken ?? input.inviteToken)!, app.id) : null,
    codeVerifier: verifier ? core.secrets.seal(verifier, app.id) : null,
    browserHash: hashToken(binding),
    createdAt: now,
    expiresAt: now + STATE_TTL_MS,
  });
  // The app's state rides in the binding cookie: it comes back only in the browser that started.
  return { location, cookie: cookieFor(core, provider, input.state ? `${binding}.${input.state}` : binding, STATE_TTL_MS / 1000) };
}

/** The binding cookie's two parts: the binding token (base64url, so no dot) and the app's state, if it gave one. */
function splitBinding(cookie: string | undefined): { binding?: string; appState?: string } {
  if (!cookie) return {};
  const dot = cookie.indexOf(".");
  return dot < 0 ? { binding: cookie } : { binding: cookie.slice(0, dot), appState: cookie.slice(dot + 1) };
}

/** Error codes a provider may send back that the app can act on; anything else is provider_error. */
const PROVIDER_DENIALS = new Set(["access_denied", "user_cancelled_authorize", "consent_required", "interaction_required"]);

export interface CallbackInput {
  state?: string;
  code?: string;
  error?: string;
  extras: CallbackExtras;
  /** the binding cookie's value */
  browser?: string;
  /** where the sign-in came from, for the audit trail */
  origin?: AuditOrigin;
}

/**
 * Finishes the flow. Before the state is found there is no trusted redirect, so failures
 * are thrown (JSON 400); after, every failure goes back to the app in the fragment.
 */
export async function finishOAuth(core: Core, provider: OAuthProviderName, input: CallbackInput): Promise<BrowserStep> {
  if (!input.state) throw fail("invalid_state", "Missing state: start sign-in again from the app.");
  const { binding, appState } = splitBinding(input.browser);
  const browserHash = binding ? hashToken(binding) : "";
  const outcome = await core.db.oauth.consumeState(hashToken(input.state), (h) => browserHash !== "" && constantTimeEqual(h, browserHash), core.clock());
  if (outcome.kind === "unknown") throw fail("invalid_state", "Unknown or outdated sign-in state: start sign-in again from the app.");
  const { state } = outcome;
  const app = await core.db.apps.findById(state.appId);
  if (!app) throw fail("invalid_state", "The app of this sign-in no longer exists.");
  // The allow-list may have changed since the start: a URL taken off it is not followed.
  const redirect = allowedRedirect(app, state.redirectUrl);
  const clear = cookieFor(core, provider, "", 0);
  // Echoed only to the browser whose cookie matched the flow.
  const echo: Record<string, string> = outcome.kind === "mismatch" || !appState ? {} : { service_state: appState };
  try {
    if (outcome.kind === "mismatch" || outcome.kind === "used" || state.provider !== provider) {
      throw fail("invalid_state", "This sign-in was started in another browser or already finished. Start again.");
    }
    if (outcome.kind === "expired") throw fail("state_expired", "Sign-in took longer than 10 minutes. Start again.");
    if (input.error) {
      throw PROVIDER_DENIALS.has(input.error)
        ? fail("access_denied", `Sign-in with ${provider} was cancelled or refused.`)
        : fail("provider_error", `${provider} reported an error.`);
    }
    if (!input.code) throw fail("provider_error", `${provider} returned no authorization code.`);
    const config = providerConfig(core, app, provider);
    const verifier = state.codeVerifier ? core.secrets.open(state.codeVerifier, app.id) : null;
    let identity: Identity;
    try {
      const tokens = await PROVIDERS[provider].exchange(config, input.code, verifier, input.extras.iss);
      identity = await readIdentity(provider, tokens, config, input.extras);
    } catch (e) {
      if (HTTPError.isError(e)) throw e;
      core.log.warn("oauth code exchange failed", { provider, appId: app.id, error: e instanceof Error ? e.message : String(e) });
      throw fail("provider_error", `${provider} did not accept the sign-in.`);
    }
    const inviteToken = state.inviteToken ? core.secrets.open(state.inviteToken, app.id) : null;
    const { tenant, method, tokens, mfa } =
      inviteToken !== null && isUpgradeToken(inviteToken)
        ? await upgradeWithProvider(core, app, provider, identity, inviteToken)
        : await signIn(core, app, provider, identity, inviteToken);
    // A second factor is due: the app answers the ticket with POST /api/v1/auth/mfa/verify.
    if (tokens) await auditSignIn(core, app.id, tenant.id, method, input.origin);
    const fragment = mfa
      ? { service_oauth: "mfa_required", service_mfa_ticket: mfa.mfaTicket, service_mfa_methods: mfa.methods.join(","), ...echo }
      : { service_oauth: "success", service_access_token: tokens.accessToken, service_refresh_token: tokens.refreshToken, ...echo };
    return { location: withFragment(redirect, fragment), cookie: clear };
  } catch (e) {
    const code = HTTPError.isError(e) && !e.unhandled ? ((e.body as { error?: ErrorCode } | undefined)?.error ?? "provider_error") : "internal_error";
    if (code === "internal_error") core.log.error("oauth callback failed", { provider, appId: app.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    return { location: withFragment(redirect, { service_oauth: "error", error: code, ...echo }), cookie: clear };
  }
}
