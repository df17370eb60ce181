import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from "node:crypto";
import type { OAuthProviderName } from "../src/apps/settings.ts";

/** What the person signs in as at the fake provider. */
export interface FakeAccount {
  id: string;
  email?: string | null;
  /** Whether the provider vouches for the email (default true). */
  verified?: boolean;
  /** Leave the email out of the id token (Apple then has it only in the first-time `user` field). */
  emailOnlyInUserField?: boolean;
}

/** The client credentials the fake expects, as configured in the app's settings. */
export interface FakeClient {
  clientId: string;
  clientSecret: string;
}

/** Every host arctic (and tenantd's identity reads) talk to, as found in arctic's provider sources. */
export const PROVIDER_HOSTS = [
  "accounts.google.com",
  "oauth2.googleapis.com",
  "github.com",
  "api.github.com",
  "appleid.apple.com",
  "login.microsoftonline.com",
  "www.facebook.com",
  "graph.facebook.com",
  "discord.com",
  "twitter.com",
  "api.twitter.com",
  "api.x.com",
];

const AUTHORIZE: [RegExp, OAuthProviderName][] = [
  [/^\/accounts\.google\.com\/o\/oauth2\/v2\/auth$/, "google"],
  [/^\/github\.com\/login\/oauth\/authorize$/, "github"],
  [/^\/appleid\.apple\.com\/auth\/authorize$/, "apple"],
  [/^\/login\.microsoftonline\.com\/[^/]+\/oauth2\/v2\.0\/authorize$/, "microsoft"],
  [/^\/www\.facebook\.com\/v16\.0\/dialog\/oauth$/, "facebook"],
  [/^\/discord\.com\/oauth2\/authorize$/, "discord"],
  [/^\/twitter\.com\/i\/oauth2\/authorize$/, "twitter"],
];
const TOKEN: [RegExp, OAuthProviderName][] = [
  [/^\/oauth2\.googleapis\.com\/token$/, "google"],
  [/^\/github\.com\/login\/oauth\/access_token$/, "github"],
  [/^\/appleid\.apple\.com\/auth\/token$/, "apple"],
  [/^\/login\.microsoftonline\.com\/[^/]+\/oauth2\/v2\.0\/token$/, "microsoft"],
  [/^\/graph\.facebook\.com\/v16\.0\/oauth\/access_token$/, "facebook"],
  [/^\/discord\.com\/api\/oauth2\/token$/, "discord"],
  [/^\/api\.twitter\.com\/2\/oauth2\/token$/, "twitter"],
];

interface Grant {
  provider: OAuthProviderName;
  account: FakeAccount;
  redirectUri: string;
  clientId: string;
  challenge: string | null;
  tenant: string | null;
  used: boolean;
}

const b64url = (v: string | Buffer) => Buffer.from(v).toString("base64url");
/** Unsigned-looking id token: tenantd reads claims from the token endpoint's own answer. */
const idToken = (claims: object) => `${b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}.${b64url("fake-signature")}`;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

export interface FakeOAuth {
  url: string;
  apple: { teamId: string; keyId: string; privateKeyPem: string };
  /** The next authorization of `provider` signs in as `account` (or fails with `error`). */
  next(provider: OAuthProviderName, outcome: FakeAccount | { error: string }): void;
  /** Query of every authorization request, newest last. */
  authorizations: { provider: OAuthProviderName; query: URLSearchParams }[];
  /** Rewrites provider hosts to the fake in `globalThis.fetch`; returns the restore function. */
  interceptFetch(): () => void;
  /** `fetch` for a provider URL, rewritten to the fake (used to follow the authorization redirect). */
  rewrite(url: string): string;
  close(): Promise<void>;
}

/**
 * A local stand-in for the seven providers: authorization (redirects back with code and
 * state, or Apple's form post), token endpoint (checks client credentials, redirect URI,
 * PKCE, Apple's ES256 client-secret JWT), and the user-info endpoints tenantd reads.
 */
export async function startFakeOAuth(clients: Record<OAuthProviderName, FakeClient>): Promise<FakeOAuth> {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const apple = { teamId: "TEAM123456", keyId: "KEY1234567", privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString() };
  const queued = new Map<OAuthProviderName, FakeAccount | { error: string }>();
  const grants = new Map<string, Grant>();
  const accessTokens = new Map<string, { provider: OAuthProviderName; account: FakeAccount; scopes: string[] }>();
  const appleUsersSeen = new Set<string>();
  const authorizations: FakeOAuth["authorizations"] = [];

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => send(res, 500, { error: "server_error", error_description: String(e) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://fake");
    const path = url.pathname;
    const authorize = AUTHORIZE.find(([re]) => re.test(path));
    if (authorize && req.method === "GET") return authorizeStep(authorize[1], url, res);
    const token = TOKEN.find(([re]) => re.test(path));
    if (token && req.method === "POST") return tokenStep(token[1], path, req, await readBody(req), res);
    if (req.method === "GET") return userInfo(path, url, req, res);
    send(res, 404, { error: "not_found" });
  }

  function authorizeStep(provider: OAuthProviderName, url: URL, res: ServerResponse) {
    const q = url.searchParams;
    authorizations.push({ provider, query: q });
    const redirectUri = q.get("redirect_uri")!;
    const state = q.get("state") ?? "";
    const outcome = queued.get(provider);
    queued.delete(provider);
    const back = new URL(redirectUri);
    if (!outcome || "error" in outcome || q.get("client_id") !== clients[provider].clientId) {
      back.searchParams.set("error", outcome && "error" in outcome ? outcome.error : "unauthorized_client");
      back.searchParams.set("state", state);
      return send(res, 302, undefined, { location: back.href });
    }
    const code = b64url(randomBytes(16));
    const tenant = /^\/login\.microsoftonline\.com\/([^/]+)\//.exec(url.pathname)?.[1] ?? null;
    grants.set(code, { provider, account: outcome, redirectUri, clientId: q.get("client_id")!, challenge: q.get("code_challenge"), tenant, used: false });
    if (provider === "apple") {
      if (q.get("response_mode") !== "form_post") return send(res, 400, { error: "invalid_request", error_description: "response_mode must be form_post with scopes" });
      const fields: Record<string, string> = { code, state };
      // Apple sends the user's name and email as a form field on the first authorization only.
      if (!appleUsersSeen.has(outcome.id)) {
        appleUsersSeen.add(outcome.id);
        fields.user = JSON.stringify({ name: { firstName: "Ada", lastName: "Lovelace" }, email: outcome.email ?? undefined });
      }
      return send(res, 200, { formPost: { action: redirectUri, fields } });
    }
    back.searchParams.set("code", code);
    back.searchParams.set("state", state);
    send(res, 302, undefined, { location: back.href });
  }

  function clientAuth(req: IncomingMessage, body: URLSearchParams): { id: string | null; secret: string | null } {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, "base64").toString("utf8").split(":");
      return { id: id ?? null, secret: secret ?? null };
    }
    return { id: body.get("client_id"), secret: body.get("client_secret") };
  }

  function appleSecretValid(jwt: string, clientId: string): boolean {
    const [h, p, s] = jwt.split(".");
    if (!h || !p || !s) return false;
    const header = JSON.parse(Buffer.from(h, "base64url").toString());
    const payload = JSON.parse(Buffer.from(p, "base64url").toString());
    const key: KeyObject = createPublicKey(publicKey.export({ type: "spki", format: "pem" }));
    const ok = verify("sha256", Buffer.from(`${h}.${p}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(s, "base64url"));
    return ok && header.alg === "ES256" && header.kid === apple.keyId && payload.iss === apple.teamId && payload.sub === clientId;
  }

  function tokenStep(provider: OAuthProviderName, path: string, req: IncomingMessage, raw: string, res: ServerResponse) {
    const body = new URLSearchParams(raw);
    const grant = grants.get(body.get("code") ?? "");
    const client = clientAuth(req, body);
    const expected = clients[provider];
    const bad = (why: string) => send(res, 400, { error: "invalid_grant", error_description: why });
    if (body.get("grant_type") !== "authorization_code") return bad("grant_type");
    if (!grant || grant.used || grant.provider !== provider) return bad("unknown or used code");
    grant.used = true;
    if (body.get("redirect_uri") !== null && body.get("redirect_uri") !== grant.redirectUri) return bad("redirect_uri mismatch");
    if (client.id !== expected.clientId || client.id !== grant.clientId) return bad("client_id mismatch");
    if (provider === "apple" ? !appleSecretValid(client.secret ?? "", expected.clientId) : client.secret !== expected.clientSecret) {
      return send(res, 401, { error: "invalid_client" });
    }
    if (grant.challenge !== null) {
      const verifier = body.get("code_verifier") ?? "";
      if (createHash("sha256").update(verifier).digest("base64url") !== grant.challenge) return bad("PKCE verifier does not match");
    }
    if (grant.tenant !== null && !path.includes(`/${grant.tenant}/`)) return bad("tenant mismatch");
    const access = b64url(randomBytes(16));
    const scopes = (authorizations.findLast((a) => a.provider === provider)?.query.get("scope") ?? "").split(" ");
    accessTokens.set(access, { provider, account: grant.account, scopes });
    const a = grant.account;
    const verified = a.verified ?? true;
    const reply: Record<string, unknown> = { access_token: access, token_type: "Bearer", expires_in: 3600 };
    if (provider === "google") {
      reply.id_token = idToken({ iss: "https://accounts.google.com", aud: expected.clientId, sub: a.id, email: a.email ?? undefined, email_verified: verified });
    } else if (provider === "microsoft") {
      reply.id_token = idToken({ iss: `https://login.microsoftonline.com/${grant.tenant}/v2.0`, aud: expected.clientId, sub: a.id, email: a.email ?? undefined, ...(verified ? { xms_edov: true } : {}) });
    } else if (provider === "apple") {
      const email = a.emailOnlyInUserField ? {} : { email: a.email ?? undefined, email_verified: verified ? "true" : "false" };
      reply.id_token = idToken({ iss: "https://appleid.apple.com", aud: expected.clientId, sub: a.id, ...email });
    }
    send(res, 200, reply);
  }

  function userInfo(path: string, url: URL, req: IncomingMessage, res: ServerResponse) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const token = accessTokens.get(bearer);
    if (!token) return send(res, 401, { error: "invalid_token" });
    const a = token.account;
    const verified = a.verified ?? true;
    const hasEmail = a.email !== undefined && a.email !== null;
    switch (`${token.provider} ${path}`) {
      case "github /api.github.com/user":
        return send(res, 200, { id: Number(a.id), login: `user${a.id}`, email: null });
      case "github /api.github.com/user/emails":
        return send(res, 200, hasEmail ? [{ email: "other@example.org", primary: false, verified: true }, { email: a.email, primary: true, verified }] : []);
      case "facebook /graph.facebook.com/me":
        if (url.searchParams.get("fields") !== "id,email") return send(res, 400, { error: { message: "fields" } });
        // Facebook returns an email only once the person has confirmed it.
        return send(res, 200, hasEmail && verified ? { id: a.id, email: a.email } : { id: a.id });
      case "discord /discord.com/api/users/@me":
        return send(res, 200, { id: a.id, username: `user${a.id}`, email: a.email ?? null, verified });
      case "twitter /api.x.com/2/users/me": {
        const granted = token.scopes.includes("users.email") && url.searchParams.get("user.fields") === "confirmed_email";
        return send(res, 200, { data: { id: a.id, username: `user${a.id}`, ...(granted && hasEmail && verified ? { confirmed_email: a.email } : {}) } });
      }
    }
    send(res, 404, { error: "not_found" });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rewrite = (raw: string) => {
    const u = new URL(raw);
    return PROVIDER_HOSTS.includes(u.host) && u.protocol === "https:" ? `${base}/${u.host}${u.pathname}${u.search}` : raw;
  };

  return {
    url: base,
    apple,
    authorizations,
    next: (provider, outcome) => queued.set(provider, outcome),
    rewrite,
    interceptFetch() {
      const original = globalThis.fetch;
      globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
        if (input instanceof Request) {
          const target = rewrite(input.url);
          if (target === input.url) return original(input, init);
          const body = input.method === "GET" || input.method === "HEAD" ? undefined : await input.arrayBuffer();
          return original(new Request(target, { method: input.method, headers: input.headers, body, redirect: "manual", signal: input.signal }), init);
        }
        return original(rewrite(String(input)), { ...init, redirect: "manual" });
      };
      return () => {
        globalThis.fetch = original;
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
