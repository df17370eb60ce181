import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLocalJWKSet, jwtVerify } from "jose";
import { developerSession, expectError, serveHttp, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { refresh } from "./_auth.ts";
import { start as startVerifier } from "../examples/verify-access-token/server.mjs";
import { RETIRED_KEY_OVERLAP_MS } from "../src/auth/signing-keys.ts";
import { runCli } from "./_cli.ts";

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const part = (token: string, i: 0 | 1) => JSON.parse(Buffer.from(token.split(".")[i]!, "base64url").toString("utf8"));
const jwksOf = async (t: TestBackend, appId = t.app.id) => (await t.request("GET", `/api/v1/apps/${appId}/.well-known/jwks.json`)).body;
const me = (t: TestBackend, accessToken: string, appId = t.app.id) => t.request("GET", "/api/v1/auth/me", { bearer: { accessToken, appId } });

describe("access tokens other services verify offline (issue 42)", () => {
  it("signs with the app's Ed25519 key, published as its JWKS, and jose verifies the token", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const header = part(tenant.accessToken, 0);
    expect(header).toEqual({ alg: "EdDSA", typ: "JWT", kid: expect.stringMatching(/^key_/) });
    const res = await t.request("GET", `/api/v1/apps/${t.app.id}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    expect(res.body).toEqual({ keys: [{ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: header.kid, x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) }] });
    const { payload } = await jwtVerify(tenant.accessToken, createLocalJWKSet(res.body), { issuer: "tenantd", algorithms: ["EdDSA"], currentDate: new Date(t.clock()) });
    expect(payload).toMatchObject({ sub: tenant.id, app: t.app.id });
    // Another app has its own key: its JWKS does not verify this app's tokens.
    const other = await t.backend.admin.createApp({ name: "other" });
    await expect(jwtVerify(tenant.accessToken, createLocalJWKSet(await jwksOf(t, other.id)))).rejects.toThrow();
  });

  it("keeps the private key sealed at rest, bound to its app", async () => {
    const t = await startBackend();
    await signupTenant(t);
    const [key] = await t.backend.core.db.signingKeys.listForApp(t.app.id);
    expect(t.backend.core.secrets.isSealed(key!.privateKeySealed)).toBe(true);
    expect(() => t.backend.core.secrets.open(key!.privateKeySealed, `app_other:${key!.kid}`)).toThrow(/cannot decrypt/);
  });

  it("answers 404 for the JWKS of an app that does not exist", async () => {
    const t = await startBackend();
    expectError(await t.request("GET", "/api/v1/apps/app_nope/.well-known/jwks.json"), 404, "not_found");
  });

  it("refuses tokens under a key it did not make, a foreign app's key, or a doctored header", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const other = await t.backend.admin.createApp({ name: "other" });
    const otherTenant = await signupTenant(t, { key: other.publishableKey, appId: other.id });
    const claims = part(tenant.accessToken, 1);
    const { kid } = part(tenant.accessToken, 0);
    const stranger = generateKeyPairSync("ed25519").privateKey;
    const signed = (header: unknown, body: unknown) => {
      const data = `${b64(header)}.${b64(body)}`;
      return `${data}.${sign(null, Buffer.from(data), stranger).toString("base64url")}`;
    };
    const otherHeader = otherTenant.accessToken.split(".")[0]!;
    const [, , otherSig] = otherTenant.accessToken.split(".");
    const forged = [
      signed({ alg: "EdDSA", typ: "JWT", kid }, claims),
      signed({ typ: "JWT", alg: "EdDSA", kid }, claims),
      signed({ alg: "EdDSA", typ: "JWT", kid: "key_aaaaaaaaaaaaaaaa" }, claims),
      `${b64({ alg: "none", typ: "JWT", kid })}.${b64(claims)}.`,
      // The other app's key and header over this app's claims.
      `${otherHeader}.${b64(claims)}.${otherSig}`,
    ];
    for (const token of forged) expectError(await me(t, token), 401, "invalid_access_token");
    expect((await me(t, tenant.accessToken)).status).toBe(200);
  });

  it("rotates with an overlap: old tokens keep working, new ones carry the new key, the old key leaves the JWKS once its tokens expired", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const oldKid = part(tenant.accessToken, 0).kid;
    const dev = await developerSession(t);
    // The default app has no owner until a developer is the only one: it is theirs now.
    await t.backend.admin.setAppOwner(t.app.id, (await t.request("GET", "/api/v1/developer/me", { developer: dev })).body.developer.email);
    const rotated = await t.request("POST", `/api/v1/admin/apps/${t.app.id}/signing-keys/rotate`, { developer: dev });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({
      kid: expect.stringMatching(/^key_/),
      previousKid: oldKid,
      previousVerifiesUntil: new Date(t.clock() + RETIRED_KEY_OVERLAP_MS).toISOString(),
    });
    expect((await me(t, tenant.accessToken)).status).toBe(200);
    expect((await jwksOf(t)).keys.map((k: { kid: string }) => k.kid)).toEqual([rotated.body.kid, oldKid]);
    const next = await refresh(t, tenant.refreshToken);
    expect(part(next.body.accessToken, 0).kid).toBe(rotated.body.kid);
    expect((await me(t, next.body.accessToken)).status).toBe(200);
    const listed = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/signing-keys`, { developer: dev });
    expect(listed.body.keys.map((k: { kid: string; current: boolean }) => [k.kid, k.current])).toEqual([[rotated.body.kid, true], [oldKid, false]]);
    t.clock.advance(RETIRED_KEY_OVERLAP_MS);
    expect((await jwksOf(t)).keys.map((k: { kid: string }) => k.kid)).toEqual([rotated.body.kid]);
    expectError(await me(t, tenant.accessToken), 401, "token_expired");
  });

  it("verifies a token signed by a key another process made (another node, the CLI's rotation)", async () => {
    const t = await startBackend();
    const second = await startBackend({ dataDir: t.dataDir });
    const tenant = await signupTenant(t);
    await second.backend.admin.rotateSigningKey(t.app.id);
    // The second process signs with its new key; the first has never seen it.
    const next = await refresh(second, tenant.refreshToken);
    expect(part(next.body.accessToken, 0).kid).not.toBe(part(tenant.accessToken, 0).kid);
    expect((await me(t, next.body.accessToken)).status).toBe(200);
  });

  it("the example app backend verifies tokens with jose over real HTTP, across a rotation", async () => {
    const t = await startBackend();
    const { url } = await serveHttp(t.backend);
    const verifier = await startVerifier({ tenantdUrl: url, appId: t.app.id, port: 0, now: t.clock, cooldownMs: 0 });
    try {
      const tenant = await signupTenant(t);
      const whoami = (token: string) => fetch(`${verifier.url}/whoami`, { headers: { authorization: `Bearer ${token}` } });
      const first = await whoami(tenant.accessToken);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ tenantId: tenant.id, sessionId: part(tenant.accessToken, 1).sid, familyOwnerId: null });
      await t.backend.admin.rotateSigningKey(t.app.id);
      const next = await refresh(t, tenant.refreshToken);
      // jose fetches the JWKS again for the kid it has not seen.
      expect((await whoami(next.body.accessToken)).status).toBe(200);
      expect((await whoami(tenant.accessToken)).status).toBe(200);
      const [h, , s] = next.body.accessToken.split(".");
      expect((await whoami(`${h}.${b64({ ...part(next.body.accessToken, 1), sub: "tnt_other" })}.${s}`)).status).toBe(401);
    } finally {
      await verifier.close();
    }
  });

  it("rotates and lists from the CLI; the running server signs with the new key within a minute", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const oldKid = part(tenant.accessToken, 0).kid;
    const rotated = await runCli(["app", "rotate-signing-key", t.app.id, "--json", "--data-dir", t.dataDir]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const r = JSON.parse(rotated.stdout);
    expect(r).toMatchObject({ kid: expect.stringMatching(/^key_/), previousKid: oldKid });
    const listed = await runCli(["app", "signing-keys", t.app.id, "--data-dir", t.dataDir]);
    expect(listed.stdout).toContain(`${r.kid}  current`);
    expect(listed.stdout).toContain(`${oldKid}  retired`);
    t.clock.advance(60_000);
    const next = await refresh(t, tenant.refreshToken);
    expect(part(next.body.accessToken, 0).kid).toBe(r.kid);
    expect((await me(t, tenant.accessToken)).status).toBe(200);
  });
});
