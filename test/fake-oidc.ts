import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";

/** The issuer the app is configured with; fetches to it reach the local server. */
export const ISSUER = "https://idp.example.test";

/** How the next ID token goes wrong, to check that tenantd refuses it. */
export type Tamper = "issuer" | "audience" | "nonce" | "signature" | "expired" | "unknown-key" | "alg-none";

export interface OidcAccount {
  sub: string;
  email?: string;
  emailVerified?: boolean;
}

interface Grant {
  account: OidcAccount;
  tamper: Tamper | null;
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string | null;
  used: boolean;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/**
 * A local OpenID Connect issuer: discovery document, JWKS, authorization and token endpoints,
 * ID tokens signed RS256 for real. The token endpoint checks client credentials (basic), the
 * redirect URI and the PKCE verifier.
 */
export async function startFakeOidc(client: { clientId: string; clientSecret: string }) {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  const kid = "fake-key-1";
  const grants = new Map<string, Grant>();
  let next: { account: OidcAccount; tamper: Tamper | null } | undefined;
  const seen: { authorize: URLSearchParams[]; token: URLSearchParams[] } = { authorize: [], token: [] };
  let now = () => Date.now();

  function idToken(g: Grant): string {
    const t = g.tamper;
    const iat = Math.floor(now() / 1000);
    const claims = {
      iss: t === "issuer" ? "https://evil.example.test" : ISSUER,
      aud: t === "audience" ? "another-client" : g.clientId,
      sub: g.account.sub,
      iat,
      exp: t === "expired" ? iat - 600 : iat + 300,
      ...(g.nonce !== null && { nonce: t === "nonce" ? "not-the-nonce" : g.nonce }),
      ...(g.account.email !== undefined && { email: g.account.email, email_verified: g.account.emailVerified ?? true }),
    };
    if (t === "alg-none") return `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
    const header = { alg: "RS256", typ: "JWT", kid: t === "unknown-key" ? "fake-key-2" : kid };
    const data = `${b64(header)}.${b64(claims)}`;
    return `${data}.${sign("sha256", Buffer.from(data), t === "signature" || t === "unknown-key" ? stranger : privateKey).toString("base64url")}`;
  }

  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url!, ISSUER);
    if (url.pathname === "/.well-known/openid-configuration") {
      return json(res, 200, {
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/authorize`,
        token_endpoint: `${ISSUER}/token`,
        jwks_uri: `${ISSUER}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["client_secret_basic"],
      });
    }
    if (url.pathname === "/jwks") return json(res, 200, { keys: [{ ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" }] });
    if (url.pathname === "/authorize") {
      const q = url.searchParams;
      seen.authorize.push(q);
      if (!next) return json(res, 500, { error: "test did not say who signs in" });
      const code = randomBytes(16).toString("hex");
      grants.set(code, { ...next, clientId: q.get("client_id")!, redirectUri: q.get("redirect_uri")!, challenge: q.get("code_challenge") ?? "", nonce: q.get("nonce"), used: false });
      next = undefined;
      const back = new URL(q.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.get("state")!);
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === "/token" && req.method === "POST") {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      const form = new URLSearchParams(raw);
      seen.token.push(form);
      // RFC 6749 2.3.1: each half form-encoded before base64.
      const basic = Buffer.from((req.headers.authorization ?? "").replace(/^Basic /, ""), "base64").toString().split(":").map((s) => decodeURIComponent(s.replace(/\+/g, " ")));
      if (basic[0] !== client.clientId || basic[1] !== client.clientSecret) return json(res, 401, { error: "invalid_client" });
      const g = grants.get(form.get("code") ?? "");
      const verifier = form.get("code_verifier") ?? "";
      if (!g || g.used || g.redirectUri !== form.get("redirect_uri") || createHash("sha256").update(verifier).digest("base64url") !== g.challenge) {
        return json(res, 400, { error: "invalid_grant" });
      }
      g.used = true;
      return json(res, 200, { access_token: randomBytes(16).toString("hex"), token_type: "Bearer", expires_in: 300, id_token: idToken(g) });
    }
    return json(res, 404, { error: "not_found" });
  }

  const server = createServer((req, res) => void handle(req, res).catch((e) => json(res, 500, { error: String(e) })));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    seen,
    /** Who signs in at the next authorization, and what goes wrong with the ID token. */
    next(account: OidcAccount, tamper: Tamper | null = null) {
      next = { account, tamper };
    },
    /** The issuer's clock (the ID token's iat/exp), to follow the backend's test clock. */
    useClock(clock: () => number) {
      now = clock;
    },
    rewrite: (href: string) => (href.startsWith(ISSUER) ? local + href.slice(ISSUER.length) : href),
    /** Sends fetches for the issuer to the local server; returns the restore function. */
    interceptFetch(): () => void {
      const original = globalThis.fetch;
      globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        if (!request.url.startsWith(ISSUER)) return original(request);
        return original(new Request(local + request.url.slice(ISSUER.length), request));
      };
      return () => {
        globalThis.fetch = original;
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type FakeOidc = Awaited<ReturnType<typeof startFakeOidc>>;
