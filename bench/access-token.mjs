// The access token the raw baselines issue with every session and refresh: a JWT signed
// with Ed25519, the same header and claims as tenantd's (src/auth/access-token.ts), so a
// refresh on both sides does the work every refresh must do, signing included.
import { generateKeyPairSync, sign } from "node:crypto";

const { privateKey } = generateKeyPairSync("ed25519");
const HEADER = Buffer.from('{"alg":"EdDSA","typ":"JWT","kid":"raw-baseline-key"}').toString("base64url");
const TTL_S = 15 * 60;

export function accessToken(tenantId, appId, sessionId, now) {
  const iat = Math.floor(now / 1000);
  const claims = Buffer.from(JSON.stringify({ iss: "raw", sub: tenantId, app: appId, sid: sessionId, pid: null, iat, exp: iat + TTL_S })).toString("base64url");
  const body = `${HEADER}.${claims}`;
  return `${body}.${sign(null, Buffer.from(body), privateKey).toString("base64url")}`;
}
