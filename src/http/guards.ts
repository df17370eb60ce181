import { getRequestIP, type H3Event } from "h3";
import { clientKey, resolveClientAddress } from "./trust-proxy.ts";
import { fail } from "../errors.ts";
import { constantTimeEqual, hashToken } from "../crypto/random.ts";
import { andThen, type Awaitable } from "../awaitable.ts";
import type { Core } from "../core.ts";
import { setReplyHeader } from "./reply-headers.ts";
import { quiet } from "./lifecycle.ts";
import type { AppRow, DeveloperRow } from "../db/types.ts";
import { joinedHeader, singleHeader } from "./request-headers.ts";
import type { VerifyResult } from "../auth/access-token.ts";

/** The app named by `x-service-key` (the publishable key). */
export function requireApp(event: H3Event, core: Core): Awaitable<AppRow> {
  const key = joinedHeader(event, "x-service-key");
  if (!key) throw fail("unauthorized", "Missing x-service-key header: send your app's publishable key.");
  return andThen(core.db.apps.findByKey(key), (app) => {
    if (!app) {
      const hint = key.startsWith("sk_") ? " This is the app's secret key: it goes in x-service-secret, and only from your server." : "";
      throw fail("unauthorized", `Unknown x-service-key: check the app's publishable key (tenantd app show).${hint}`);
    }
    (event.context as { appId?: string }).appId = app.id; // for the access log
    return app;
  });
}

/**
 * The app's server-side secret key (`x-service-secret`), for the calls whose answer must
 * never reach a browser. Compared by hash in constant time.
 */
export function requireAppSecret(event: H3Event, app: AppRow, why: string): void {
  const given = event.req.headers.get("x-service-secret");
  if (given && !(app.secretKeyHash && constantTimeEqual(hashToken(given), app.secretKeyHash))) {
    throw fail("forbidden", "x-service-secret is not this app's current secret key (was it replaced by a newer one?). Issue one with: tenantd app secret-key <app>.");
  }
  if (!given) {
    throw fail(
      "forbidden",
      `${why} needs the app's secret key in x-service-secret, sent from your server only (never from a browser). Issue one with: tenantd app secret-key <app> (or POST /api/v1/admin/apps/{appId}/secret-key).`,
    );
  }
}

export interface TenantAuth {
  app: AppRow;
  tenantId: string;
  sessionId: string;
  /**
   * The token's `pid` claim, as issued: stale for up to 15 minutes after a leave or removal.
   * Decisions about the family read the tenant row (family area, billing, introspection).
   */
  parentTenantId: string | null;
  /** access token expiry, unix seconds */
  exp: number;
  /** The developer's id when a developer opened this session to see the tenant's view (read-only). */
  impersonatedBy?: string;
  /**
   * Set on an organization's record routes (src/orgs/records.ts): `tenantId` is then the
   * organization's data owner id, not the caller's, and only organization collections answer.
   */
  orgId?: string;
  /**
   * Set by the account export: the tenant's own records in every collection, also one a
   * developer declared an organization's after the tenant wrote to it (the data is still theirs).
   */
  everyCollection?: true;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function bearerToken(event: H3Event, core: Core): string | undefined {
  const header = singleHeader(event, "authorization");
  if (!header) return undefined;
  // The usual header, "Bearer " and a token verified before, is what the pattern would take,
  // without running it over the token's few hundred characters on every request.
  if (header.startsWith("Bearer ")) {
    const token = header.slice(7);
    if (core.accessTokens.known(token)) return token;
  }
  return BEARER.exec(header)?.[1];
}

type TenantCheck = TenantAuth | { error: "unauthorized" | "invalid_access_token" | "token_expired" | "session_ended"; message: string };

/**
 * Checks the tenant bearer headers: a valid access token of the app named by
 * `x-service-app`, whose session is still live. Returns the reason when it is not.
 * Synchronous when the store answers synchronously (src/awaitable.ts).
 */
export function checkTenant(
  event: H3Event,
  core: Core,
  /** The app already named by the key (introspection): then `x-service-app` is not needed. */
  keyApp?: AppRow,
): Awaitable<TenantCheck> {
  const token = bearerToken(event, core);
  if (!token) {
    return singleHeader(event, "authorization") !== null
      ? { error: "unauthorized", message: "The authorization header must read: Bearer <access token>." }
      : { error: "unauthorized", message: "Missing authorization: Bearer <access token> header." };
  }
  if (keyApp) return checkToken(core, keyApp, token);
  const appId = joinedHeader(event, "x-service-app");
  if (!appId) return { error: "unauthorized", message: "Missing x-service-app header: send your app id with the bearer token." };
  return andThen(core.db.apps.findById(appId), (app) => {
    if (app) return checkToken(core, app, token);
    const hint = appId.startsWith("pk_") ? " It takes the app id (app_…), not the publishable key." : "";
    return { error: "unauthorized", message: `Unknown x-service-app: no app has this id.${hint}` };
  });
}

function checkToken(core: Core, app: AppRow, token: string): Awaitable<TenantCheck> {
  const now = core.clock();
  const result = core.accessTokens.verify(token, now);
  // A key made by another node since this one loaded its keys: read it, then verify again.
  if (!result.ok && result.reason === "unknown-key") {
    return andThen(core.signingKeys.loadKid(result.kid), () => checkVerified(core, app, token, now, core.accessTokens.verify(token, now)));
  }
  return checkVerified(core, app, token, now, result);
}

function checkVerified(core: Core, app: AppRow, token: string, now: number, result: VerifyResult): Awaitable<TenantCheck> {
  if (!result.ok) {
    return result.reason === "expired"
      ? { error: "token_expired", message: "The access token has expired: refresh it with POST /api/v1/auth/refresh." }
      : {
          error: "invalid_access_token",
          message: token.startsWith("dev_")
            ? "This is a developer session token: tenant endpoints take a tenant access token (from signup, login or refresh)."
            : "The access token is not valid.",
        };
  }
  const { claims } = result;
  if (claims.app !== app.id) return { error: "invalid_access_token", message: "The access token was issued for another app." };
  return andThen(core.db.sessions.state(claims.sid, now), (session) => {
    if (!session || session.endedAt !== null || session.expiresAt <= now || session.tenantId !== claims.sub) {
      return { error: "session_ended", message: "This session has ended (signed out, password reset or account deleted). Sign in again." };
    }
    return { app, tenantId: claims.sub, sessionId: claims.sid, parentTenantId: claims.pid, exp: claims.exp, impersonatedBy: claims.imp };
  });
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The tenant bearer guard of every tenant-scoped endpoint: 401 with a code saying why. A
 * developer's impersonation session reads only: any other method is refused here, so no
 * write route (billing, deletion, records, sign-in changes) can be reached with it.
 */
export function requireTenant(event: H3Event, core: Core): Awaitable<TenantAuth> {
  return andThen(checkTenant(event, core), (auth) => {
    if ("error" in auth) throw fail(auth.error, auth.message);
    if (auth.impersonatedBy !== undefined && !READS.has(event.req.method)) throw refuseImpersonatedWrite();
    return auth;
  });
}

export const refuseImpersonatedWrite = () =>
  fail(
    "impersonation_read_only",
    "This is a developer's read-only impersonation session: it can read what the tenant sees, never change anything (records, files, billing, sign-in, the account). Act as the developer through the admin API or the dashboard instead.",
  );

/**
 * A tenant-scoped handler, called with the checked bearer (the guard of requireTenant).
 * The hot reads use it: no async handler and await around the guard when the store
 * answers at once (src/awaitable.ts). The route is `quiet` (lifecycle.ts): the handler must
 * write no log line of its own.
 */
export function tenantRoute<R>(core: Core, handler: (event: H3Event, auth: TenantAuth) => Awaitable<R>): (event: H3Event) => Awaitable<R> {
  return quiet((event: H3Event) => andThen(requireTenant(event, core), (auth) => handler(event, auth)));
}

export interface DeveloperAuth {
  developer: DeveloperRow;
  tokenHash: string;
}

/** A developer session (opaque bearer token from POST /api/v1/developer/login). */
export async function requireDeveloper(event: H3Event, core: Core): Promise<DeveloperAuth> {
  const token = bearerToken(event, core);
  if (!token) throw fail("unauthorized", "Missing authorization: Bearer <developer session token> header. Get one from POST /api/v1/developer/login.");
  const tokenHash = hashToken(token);
  const developer = await core.db.developers.findBySession(tokenHash, core.clock());
  if (!developer) {
    const hint = token.split(".").length === 3 ? " This looks like a tenant access token: the admin API takes a developer session token (dev_…)." : "";
    throw fail("unauthorized", `The developer session is unknown or has expired. Sign in again with POST /api/v1/developer/login.${hint}`);
  }
  (event.context as { developerId?: string }).developerId = developer.id; // the audit trail's actor (src/audit/http.ts)
  return { developer, tokenHash };
}

/** The developer's own app; another developer's app answers 404, as if it did not exist. */
export async function requireOwnApp(core: Core, developer: DeveloperRow, appId: string | undefined): Promise<AppRow> {
  const app = appId ? await core.db.apps.findById(appId) : undefined;
  if (!app || app.ownerId !== developer.id) throw fail("not_found", `No app ${appId ?? ""} among your apps.`);
  return app;
}

/**
 * Client key for rate limits: the first address, from the socket peer leftwards through
 * x-forwarded-for, that is not one of the operator's trusted proxies; IPv6 by its /64.
 */
export function clientIp(event: H3Event, core: Core): string {
  const address = resolveClientAddress(getRequestIP(event), event.req.headers.get("x-forwarded-for"), core.config.trustProxy);
  return address ? clientKey(address) : "unknown";
}

/** A reply carrying tokens: no browser, proxy or CDN may keep a copy (errors included). */
export function noStore(event: H3Event): void {
  setReplyHeader(event, "cache-control", "no-store");
  setReplyHeader(event, "pragma", "no-cache");
}
