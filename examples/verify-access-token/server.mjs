import { createServer } from "node:http";
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { createRemoteJWKSet, jwtVerify } from "jose";

/**
 * Verifies a tenantd access token offline, against the app's published keys. `jose` fetches
 * the JWKS once, keeps it, and fetches again when a token names a key it has not seen (after
 * a rotation). A token passes when its Ed25519 signature, its issuer and its expiry check out;
 * it is not asked whether the tenant signed out since: use POST /api/v1/auth/introspect when
 * an action must see a revocation at once.
 *
 * jose waits `cooldownMs` (default 30 s) after a fetch before fetching again: a token under a key
 * made in those seconds is refused until then.
 *
 * @param {{ tenantdUrl: string, appId: string, now?: () => number, cooldownMs?: number }} opts `now`: a clock in milliseconds (tests)
 */
export function createVerifier({ tenantdUrl, appId, now, cooldownMs }) {
  const jwks = createRemoteJWKSet(new URL(`/api/v1/apps/${encodeURIComponent(appId)}/.well-known/jwks.json`, tenantdUrl), { cooldownDuration: cooldownMs ?? 30_000 });
  /** @param {string} token @returns {Promise<{ tenantId: string, sessionId: string, familyOwnerId: string | null }>} */
  return async function verify(token) {
    const { payload } = await jwtVerify(token, jwks, { issuer: "tenantd", algorithms: ["EdDSA"], ...(now && { currentDate: new Date(now()) }) });
    // The JWKS is the app's own, so its keys sign only this app's tokens; the claim says so too.
    if (payload.app !== appId) throw new Error("token of another app");
    return { tenantId: /** @type {string} */ (payload.sub), sessionId: /** @type {string} */ (payload.sid), familyOwnerId: /** @type {string | null} */ (payload.pid) };
  };
}

/**
 * An app backend on node:http whose GET /whoami answers the tenant behind the bearer token,
 * without calling tenantd per request.
 *
 * @param {{ tenantdUrl: string, appId: string, port?: number, now?: () => number, cooldownMs?: number }} opts
 */
export async function start(opts) {
  const verify = createVerifier(opts);
  const server = createServer(async (req, res) => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (req.url !== "/whoami" || !token) {
      res.writeHead(token ? 404 : 401, { "content-type": "application/json" }).end(JSON.stringify({ error: token ? "not_found" : "unauthorized" }));
      return;
    }
    try {
      const who = await verify(token);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(who));
    } catch (e) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "invalid_access_token", message: e instanceof Error ? e.message : String(e) }));
    }
  });
  await new Promise((resolve) => server.listen(opts.port ?? 4001, "127.0.0.1", () => resolve(undefined)));
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${address.port}`, close: () => new Promise((resolve) => server.close(() => resolve(undefined))) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const tenantdUrl = process.env.TENANTD_URL ?? "http://localhost:3000";
  const appId = process.env.TENANTD_APP_ID;
  if (!appId) throw new Error("set TENANTD_APP_ID to your app's id (tenantd app show <app>)");
  const s = await start({ tenantdUrl, appId, port: Number(process.env.PORT ?? 4001) });
  console.log(`verifying ${appId}'s access tokens at ${s.url}/whoami`);
}
