import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { OAUTH_PROVIDERS, type OAuthProviderName } from "../src/apps/settings.ts";
import type { TenantBackendConfig } from "../src/index.ts";
import { startBackend, type Reply, type TestBackend } from "./_helpers.ts";
import { startFakeOAuth, type FakeAccount, type FakeClient, type FakeOAuth } from "./fake-oauth.ts";

export const REDIRECT = "https://app.example.com/auth/done";

/**
 * Starts the fake provider for the test file and points the provider hosts at it around
 * each test. The returned object stands for the fake once it has started.
 */
export function useFakeOAuth(): FakeOAuth {
  let fake: FakeOAuth | undefined;
  let restoreFetch: () => void = () => {};
  beforeAll(async () => {
    fake = await startFakeOAuth(CLIENTS);
  });
  afterAll(() => fake?.close());
  beforeEach(() => {
    restoreFetch = fake!.interceptFetch();
  });
  afterEach(() => restoreFetch());
  return new Proxy({} as FakeOAuth, { get: (_target, key) => Reflect.get(fake!, key) });
}

export const CLIENTS = Object.fromEntries(
  OAUTH_PROVIDERS.map((p) => [p, { clientId: `${p}-client-id`, clientSecret: `${p}-client-secret` }]),
) as Record<OAuthProviderName, FakeClient>;

/** Every provider configured for the app the way a developer would. */
export function providerSettings(fake: FakeOAuth) {
  const providers: Record<string, Record<string, unknown>> = {};
  for (const p of OAUTH_PROVIDERS) providers[p] = { clientId: CLIENTS[p].clientId, clientSecret: CLIENTS[p].clientSecret };
  providers.apple = { clientId: CLIENTS.apple.clientId, teamId: fake.apple.teamId, keyId: fake.apple.keyId, privateKey: fake.apple.privateKeyPem };
  providers.microsoft!.tenant = "contoso-tenant-id";
  return providers;
}

export async function oauthBackend(fake: FakeOAuth, opts: { signupMode?: "open" | "invite_only" | "closed"; config?: TenantBackendConfig } = {}): Promise<TestBackend> {
  const t = await startBackend(opts.config);
  await t.backend.admin.updateApp(t.app.id, {
    settings: { signupMode: opts.signupMode ?? "open", oauth: { redirectUrls: [REDIRECT], providers: providerSettings(fake) } },
  });
  return t;
}

export interface Started {
  reply: Reply;
  location: string;
  /** `name=value` of the binding cookie */
  cookie: string;
  setCookie: string;
}

export async function begin(t: TestBackend, provider: string, query: Record<string, string | undefined> = {}): Promise<Started> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ appId: t.app.id, redirect: REDIRECT, ...query })) if (v !== undefined) q.set(k, v);
  const reply = await t.request("GET", `/api/v1/auth/oauth/${provider}?${q}`);
  const setCookie = reply.headers.get("set-cookie") ?? "";
  return { reply, location: reply.headers.get("location") ?? "", cookie: setCookie.split(";")[0]!, setCookie };
}

export interface ProviderReturn {
  method: "GET" | "POST";
  path: string;
  form?: Record<string, string>;
}

/** Follows the authorization URL by hand at the fake: it answers with the redirect (or Apple's form post) back to tenantd. */
export async function authorize(fake: FakeOAuth, provider: OAuthProviderName, location: string, outcome: FakeAccount | { error: string }): Promise<ProviderReturn> {
  fake.next(provider, outcome);
  const res = await fetch(fake.rewrite(location), { redirect: "manual" });
  if (res.status === 302) {
    const back = new URL(res.headers.get("location")!);
    return { method: "GET", path: back.pathname + back.search };
  }
  const body = (await res.json()) as { formPost?: { action: string; fields: Record<string, string> } };
  if (!body.formPost) throw new Error(`fake authorize answered ${res.status} ${JSON.stringify(body)}`);
  return { method: "POST", path: new URL(body.formPost.action).pathname, form: body.formPost.fields };
}

export function callback(t: TestBackend, back: ProviderReturn, cookie: string | undefined): Promise<Reply> {
  const headers: Record<string, string> = cookie ? { cookie } : {};
  if (back.method === "GET") return t.request("GET", back.path, { headers });
  return t.request("POST", back.path, { headers: { ...headers, "content-type": "application/x-www-form-urlencoded" }, raw: new URLSearchParams(back.form).toString() });
}

/** The outcome the app reads from the fragment of the final redirect. */
export function fragmentOf(reply: Reply): URLSearchParams {
  expect(reply.status, reply.text).toBe(302);
  const location = reply.headers.get("location")!;
  expect(location.startsWith(`${REDIRECT}#`)).toBe(true);
  return new URLSearchParams(location.slice(REDIRECT.length + 1));
}

/** A whole sign-in: start, authorize at the fake, come back with the cookie. */
export async function signInWith(t: TestBackend, fake: FakeOAuth, provider: OAuthProviderName, account: FakeAccount | { error: string }, query: Record<string, string> = {}) {
  const started = await begin(t, provider, query);
  expect(started.reply.status, started.reply.text).toBe(302);
  const back = await authorize(fake, provider, started.location, account);
  const reply = await callback(t, back, started.cookie);
  return { fragment: fragmentOf(reply), started, back, reply };
}

export async function me(t: TestBackend, accessToken: string): Promise<Reply> {
  return t.request("GET", "/api/v1/auth/me", { bearer: { accessToken, appId: t.app.id } });
}
