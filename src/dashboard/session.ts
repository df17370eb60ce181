import * as v from "valibot";
import { resolve } from "node:path";
import { getRequestIP, type H3, type H3Event } from "h3";
import type { Core } from "../core.ts";
import { readJson } from "../http/body.ts";
import { enforceRateLimit } from "../http/rate-limit.ts";
import { clientIp } from "../http/guards.ts";
import { resolveClientAddress } from "../http/trust-proxy.ts";
import { hashToken } from "../crypto/random.ts";
import { DEVELOPER_SESSION_TTL_MS, loginDeveloper, toPublicDeveloper } from "../admin/developers.ts";
import { csrfToken, requireCsrf, requireSameOrigin, secureHeaders, sessionCookie, sessionToken } from "./security.ts";
import type { DeveloperRow } from "../db/types.ts";

const SignInBody = v.object({
  email: v.pipe(v.string("email must be a string"), v.trim(), v.toLowerCase(), v.minLength(1, "email is required")),
  password: v.pipe(v.string("password must be a string"), v.minLength(1, "password is required")),
});

/**
 * The command that creates the first developer, as the person should type it. The data
 * directory's absolute path tells a stranger about the machine: it is shown in development
 * and to a browser on the machine itself, else only named.
 */
export function firstDeveloperCommand(core: Core, showPath = true): string {
  const dir = core.config.dataDir;
  // The CLI's own default: ./.tenantd under the folder the command runs in.
  const isDefault = dir === resolve(".tenantd") && !process.env.TENANTD_DATA_DIR;
  const where = showPath ? JSON.stringify(dir) : "<the server's data directory>";
  return `npx tenantd developer create --email you@example.com${isDefault ? "" : ` --data-dir ${where}`}`;
}

function isLoopback(event: H3Event, core: Core): boolean {
  const address = resolveClientAddress(getRequestIP(event), event.req.headers.get("x-forwarded-for"), core.config.trustProxy);
  return address !== undefined && (/^127\./.test(address) || address === "::1");
}

/** The dashboard's signed-in developer, from the session cookie. */
export async function dashboardSession(event: H3Event, core: Core): Promise<{ developer: DeveloperRow; token: string; tokenHash: string } | undefined> {
  const token = sessionToken(event);
  if (!token) return undefined;
  const tokenHash = hashToken(token);
  const developer = await core.db.developers.findBySession(tokenHash, core.clock());
  return developer && { developer, token, tokenHash };
}

/** `<dashboard path>/` as the browser sees it (a host that mounts tenantd adds its prefix). */
export function cookiePath(event: H3Event, path: string): string {
  const p = event.url.pathname;
  return p.slice(0, p.lastIndexOf(`${path}/`)) + `${path}/`;
}

const json = (body: unknown, status = 200, extra?: Record<string, string>) => {
  const headers = new Headers({ "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...extra });
  secureHeaders(headers);
  return new Response(body === null ? null : JSON.stringify(body), { status, headers });
};

export function registerSessionRoutes(h3: H3, core: Core, path: string): void {
  const devMode = () => core.config.email.transport === "outbox";
  // What the pages show the developer to register elsewhere: OAuth callback and Stripe webhook URLs.
  const server = () => ({ devMode: devMode(), publicUrl: core.config.publicUrl });

  h3.get(`${path}/session`, async (event) => {
    const session = await dashboardSession(event, core);
    if (session) {
      return json({ signedIn: true, developer: toPublicDeveloper(session.developer), csrfToken: csrfToken(core, session.tokenHash), ...server() });
    }
    const firstRun = (await core.db.developers.list()).length === 0;
    const showPath = core.config.mode === "development" || isLoopback(event, core);
    return json({ signedIn: false, firstRun, createDeveloperCommand: firstRun ? firstDeveloperCommand(core, showPath) : undefined });
  });

  h3.post(`${path}/session`, async (event) => {
    requireSameOrigin(event, core);
    const body = await readJson(event, SignInBody, core.config.maxJsonBytes);
    await enforceRateLimit(event, core, "developer-login", { email: body.email });
    const { token, developer } = await loginDeveloper(core, body.email, body.password, clientIp(event, core));
    const cookie = sessionCookie(event, core, cookiePath(event, path), token, Math.floor(DEVELOPER_SESSION_TTL_MS / 1000));
    return json({ signedIn: true, developer, csrfToken: csrfToken(core, hashToken(token)), ...server() }, 200, { "set-cookie": cookie });
  });

  h3.delete(`${path}/session`, async (event) => {
    const session = await dashboardSession(event, core);
    const clear = sessionCookie(event, core, cookiePath(event, path), "", 0);
    if (!session) return json(null, 204, { "set-cookie": clear });
    requireCsrf(event, core, session.tokenHash);
    await core.db.developers.endSession(session.tokenHash);
    return json(null, 204, { "set-cookie": clear });
  });
}
