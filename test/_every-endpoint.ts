import { expect } from "vitest";
import Stripe from "stripe";
import { buildRequest, developerSession, serveHttp, startBackend, toReply, type Reply, type ReqOptions, type TestBackend } from "./_helpers.ts";
import { outboxFor, tokenFromOutbox } from "./_email.ts";
import { startFakeOAuth } from "./fake-oauth.ts";
import { startFakeStripe } from "./fake-stripe.ts";
import { CLIENTS, REDIRECT, providerSettings } from "./oauth-helpers.ts";
import { multipart, sample } from "./files-helpers.ts";
import { startReceiver } from "./_webhook-receiver.ts";
import { softAuthenticator } from "./_passkey.ts";
import { totpCode } from "./_mfa.ts";

/** One request and its answer, as the contract test checks it against the document. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
  text: string;
}

const PASSWORD = "correct horse battery";
const STRIPE_SECRET = "sk_test_contract";
const STRIPE_WEBHOOK_SECRET = "whsec_contract";

/**
 * Runs every endpoint tenantd serves against a real server over HTTP, successes and a
 * sample of refusals, and returns every exchange. Each step asserts the status it expects,
 * so an exchange list that silently skipped a route cannot pass as complete.
 */
export async function runEveryEndpoint(): Promise<{ exchanges: Exchange[]; t: TestBackend; url: string }> {
  const oauth = await startFakeOAuth(CLIENTS);
  const restoreFetch = oauth.interceptFetch();
  const stripeFake = await startFakeStripe({ secretKey: STRIPE_SECRET, now: () => t.clock() });
  const t: TestBackend = await startBackend({ stripeApi: stripeFake.api, webhooks: { allowInsecure: true } });
  const { url } = await serveHttp(t.backend);
  const exchanges: Exchange[] = [];
  try {
    const call = async (method: string, path: string, opts: ReqOptions = {}, expected?: number, base = url): Promise<Reply> => {
      const res = await fetch(buildRequest(base, method, path, opts), { redirect: "manual" });
      const reply = await toReply(res);
      exchanges.push({ method, path, status: reply.status, contentType: res.headers.get("content-type"), body: reply.body, text: reply.text });
      if (expected !== undefined) expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(expected);
      return reply;
    };
    /** A server-sent event stream read up to its ready event: its id, and how to close it. */
    const openStream = async (path: string, headers: Record<string, string> = {}) => {
      const abort = new AbortController();
      const res = await fetch(`${url}${path}`, { headers, signal: abort.signal });
      expect(res.status, path).toBe(200);
      const reader = res.body!.getReader();
      let text = "";
      while (!text.includes("event: ready")) text += new TextDecoder().decode((await reader.read()).value);
      exchanges.push({ method: "GET", path: path.replace(/\?.*/, ""), status: res.status, contentType: res.headers.get("content-type"), body: undefined, text: "" });
      return { stream: /"stream":"([^"]+)"/.exec(text)![1]!, close: () => abort.abort() };
    };
    const key = t.app.publishableKey;
    const appId = t.app.id;
    const form = (fields: Record<string, string>) => ({ raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

    // The spec document itself.
    await call("GET", "/api/v1/openapi.json", {}, 200);
    await call("GET", "/", {}, 200);
    await call("GET", "/api/v1/health", {}, 200);
    await call("GET", "/api/v1/health/ready", {}, 200);

    // Developer and admin API.
    const dev = await developerSession(t);
    const devEmail = (await call("GET", "/api/v1/developer/me", { developer: dev }, 200)).body.developer.email as string;
    await call("POST", "/api/v1/developer/login", { body: { email: devEmail, password: "wrong password!" } }, 401);
    await call("POST", "/api/v1/developer/login", { body: { email: devEmail, password: "developer password" } }, 200);
    await call("GET", "/api/v1/developer/usage", { developer: dev }, 200);
    await call("GET", "/api/v1/admin/apps", { developer: dev }, 200);
    await call("GET", "/api/v1/admin/apps", {}, 401);
    // The default app belongs to nobody: the developer makes one of its own for everything else.
    const created = await call("POST", "/api/v1/admin/apps", { developer: dev, body: { name: "Contract" } }, 201);
    const app = created.body.app as { id: string; publishableKey: string };
    const admin = `/api/v1/admin/apps/${app.id}`;
    await call("GET", admin, { developer: dev }, 200);
    await call("GET", `/api/v1/admin/apps/app_nope`, { developer: dev }, 404);
    await call("PATCH", admin, { developer: dev, body: { settings: { oauth: { redirectUrls: [REDIRECT], providers: providerSettings(oauth) }, email: { sendEmail: true }, collections: { notes: { unique: ["title"], indexed: ["n"] }, tasks: { org: true, unique: ["code"] } } } } }, 200);
    await call("PATCH", admin, { developer: dev, body: { nope: 1 } }, 400);
    const secretKey = (await call("POST", `${admin}/secret-key`, { developer: dev }, 200)).body.secretKey as string;
    const rotated = await call("POST", `${admin}/rotate-key`, { developer: dev }, 200);
    const pk = rotated.body.app.publishableKey as string;

    // Tenant auth.
    await call("POST", "/api/v1/auth/signup", { key: pk, body: { email: "a@example.com", password: "short" } }, 400);
    await call("POST", "/api/v1/auth/signup", { key: "pk_nope", body: { email: "a@example.com", password: PASSWORD } }, 401);
    const signup = await call("POST", "/api/v1/auth/signup", { key: pk, body: { email: "alice@example.com", password: PASSWORD } }, 201);
    let bearer = { accessToken: signup.body.accessToken as string, appId: app.id };
    const aliceId = signup.body.tenant.id as string;
    await call("POST", "/api/v1/auth/signup", { key: pk, body: { email: "alice@example.com", password: PASSWORD } }, 409);
    await call("POST", "/api/v1/auth/login", { key: pk, body: { email: "alice@example.com", password: "not the password" } }, 401);
    const login = await call("POST", "/api/v1/auth/login", { key: pk, body: { email: "alice@example.com", password: PASSWORD } }, 200);
    const refreshed = await call("POST", "/api/v1/auth/refresh", { key: pk, body: { refreshToken: login.body.refreshToken } }, 200);
    await call("POST", "/api/v1/auth/refresh", { key: pk, body: { refreshToken: "nope" } }, 401);
    await call("POST", "/api/v1/auth/logout", { bearer: { accessToken: refreshed.body.accessToken, appId: app.id }, body: { refreshToken: refreshed.body.refreshToken } }, 204);
    await call("POST", "/api/v1/auth/refresh", { key: pk, body: { refreshToken: refreshed.body.refreshToken } }, 401);
    await call("GET", "/api/v1/auth/me", { bearer }, 200);
    await call("GET", "/api/v1/auth/me", {}, 401);
    await call("GET", "/api/v1/account/activity?limit=5", { bearer }, 200);
    await call("GET", "/api/v1/account/export", { bearer }, 200);
    // Realtime (docs/realtime.md): the stream is read up to its ready event, and closed once subscribed to.
    const ticket = await call("POST", "/api/v1/realtime/ticket", { bearer }, 201);
    const opened = await openStream(`/api/v1/realtime?ticket=${ticket.body.ticket}`);
    const closeStream = opened.close;
    const stream = opened.stream;
    await call("GET", "/api/v1/realtime", {}, 401);
    await call("POST", "/api/v1/realtime/subscriptions", { bearer, body: { stream, collection: "notes", filter: { n: 1 } } }, 201);
    await call("POST", "/api/v1/realtime/subscriptions", { bearer, body: { stream, collection: "notes", filter: { n: { $regex: "x" } } } }, 400);
    const sub = await call("POST", "/api/v1/realtime/subscriptions", { bearer, body: { stream, subscriptions: [{ collection: "notes", record: "rec_1" }] } }, 201);
    await call("DELETE", `/api/v1/realtime/subscriptions?stream=${stream}&id=${sub.body.subscriptions[0].id}`, { bearer }, 200);
    await call("DELETE", `/api/v1/realtime/subscriptions?stream=${stream}&id=sub_nope`, { bearer }, 404);
    closeStream();
    await call("GET", "/api/v1/account/activity?cursor=x", { bearer }, 400);
    await call("GET", "/api/v1/account/activity", {}, 401);
    await call("POST", "/api/v1/auth/introspect", { key: pk, body: {}, headers: { authorization: `Bearer ${bearer.accessToken}` } }, 200);
    await call("POST", "/api/v1/auth/introspect", { key: pk, body: { include: ["subscription", "tenant"] }, headers: { authorization: "Bearer nope" } }, 200);
    await call("POST", "/api/v1/auth/introspect", { key: pk, body: { include: ["subscription", "tenant"] }, headers: { authorization: `Bearer ${bearer.accessToken}` } }, 200);
    // Access-token signing keys (issue 42).
    await call("GET", `/api/v1/apps/${app.id}/.well-known/jwks.json`, {}, 200);
    await call("GET", "/api/v1/apps/app_nope/.well-known/jwks.json", {}, 404);
    await call("GET", `${admin}/signing-keys`, { developer: dev }, 200);
    await call("POST", `${admin}/signing-keys/rotate`, { developer: dev }, 200);
    // Email sign-in (issue 42).
    await call("POST", "/api/v1/auth/email-sign-in", { key: pk, body: { email: "code@example.com" } }, 403);
    await call("PATCH", admin, { developer: dev, body: { settings: { auth: { emailSignIn: true } } } }, 200);
    await call("POST", "/api/v1/auth/email-sign-in", { key: pk, body: { email: "code@example.com" } }, 202);
    await call("POST", "/api/v1/auth/email-sign-in/verify", { key: pk, body: { email: "code@example.com", code: "12345x" } }, 400);
    await call("POST", "/api/v1/auth/email-sign-in", { key: pk, body: { email: "code@example.com", redirectUrl: REDIRECT } }, 202);
    const signInLink = (await outboxFor(t, "code@example.com")).find((m) => m.kind === "sign-in")!.link!;
    await call("POST", "/api/v1/auth/email-sign-in/verify", { key: pk, body: { token: new URLSearchParams(new URL(signInLink).hash.slice(1)).get("service_email_token") } }, 200);
    await call("POST", "/api/v1/auth/email-sign-in/verify", { key: pk, body: { email: "code@example.com", code: "000000" } }, 401);
    // Anonymous tenants (issue 42).
    await call("POST", "/api/v1/auth/anonymous", { key: pk, body: {} }, 403);
    await call("PATCH", admin, { developer: dev, body: { settings: { auth: { anonymous: true } } } }, 200);
    const anon = await call("POST", "/api/v1/auth/anonymous", { key: pk, body: {} }, 201);
    const anonBearer = { accessToken: anon.body.accessToken as string, appId: app.id };
    await call("POST", "/api/v1/auth/anonymous/upgrade-token", { bearer: anonBearer }, 200);
    await call("POST", "/api/v1/auth/anonymous/upgrade", { bearer: anonBearer, body: { email: "alice@example.com", password: PASSWORD } }, 409);
    await call("POST", "/api/v1/auth/anonymous/upgrade", { bearer: anonBearer, body: { email: "anon@example.com", password: PASSWORD } }, 200);
    await call("POST", "/api/v1/auth/anonymous/upgrade-token", { bearer: anonBearer }, 409);
    await call("POST", "/api/v1/auth/resend-verification", { bearer, body: {} }, 200);
    await call("POST", `${admin}/tenants/${aliceId}/resend-verification`, { developer: dev }, 200);
    const verifyToken = await tokenFromOutbox(t, "alice@example.com", "verify");
    await call("GET", `/auth/verify-email?app=${app.id}&token=${verifyToken}`, {}, 200);
    await call("GET", `/auth/verify-email`, {}, 400);
    await call("POST", "/auth/verify-email", form({ app: app.id, token: "vrf_nope" }), 200);
    await call("POST", "/api/v1/auth/verify-email", { key: pk, body: { token: verifyToken } }, 200);
    await call("POST", "/api/v1/auth/verify-email", { key: pk, body: { token: verifyToken } }, 400);
    await call("POST", "/api/v1/account/export/email", { bearer, body: {} }, 202);
    const exportToken = await tokenFromOutbox(t, "alice@example.com", "export");
    await call("GET", `/account/export-download?app=${app.id}&token=${exportToken}`, {}, 200);
    await call("GET", "/account/export-download", {}, 400);
    await call("POST", "/account/export-download", form({ app: app.id, token: exportToken }), 200);
    await call("POST", "/api/v1/auth/request-password-reset", { key: pk, body: { email: "alice@example.com" } }, 204);
    await call("POST", "/api/v1/auth/request-password-reset", { key: pk, body: { email: "alice@example.com", sendEmail: false } }, 403);
    const reset = await call("POST", "/api/v1/auth/request-password-reset", { key: pk, body: { email: "alice@example.com", sendEmail: false }, headers: { "x-service-secret": secretKey } }, 200);
    await call("GET", `/auth/reset-password?app=${app.id}&token=${reset.body.resetToken}`, {}, 200);
    await call("POST", "/auth/reset-password", form({ app: app.id, token: "rst_nope", password: "another password" }), 200);
    await call("POST", "/api/v1/auth/reset-password", { key: pk, body: { token: reset.body.resetToken, password: "a new password" } }, 200);
    await call("POST", "/api/v1/auth/reset-password", { key: pk, body: { token: reset.body.resetToken, password: "a new password" } }, 400);
    await call("GET", "/api/v1/auth/me", { bearer }, 401);
    const relogin = await call("POST", "/api/v1/auth/login", { key: pk, body: { email: "alice@example.com", password: "a new password" } }, 200);
    bearer = { accessToken: relogin.body.accessToken, appId: app.id };

    // Passkeys, MFA, step-up.
    await call("PATCH", admin, { developer: dev, body: { settings: { corsOrigins: ["https://app.example.com"] } } }, 200);
    const device = softAuthenticator("https://app.example.com");
    const regOptions = await call("POST", "/api/v1/auth/passkeys/register/options", { bearer, body: {} }, 200);
    const passkey = await call("POST", "/api/v1/auth/passkeys/register", { bearer, body: { credential: device.create(regOptions.body), name: "Laptop" } }, 201);
    await call("POST", "/api/v1/auth/passkeys/register", { bearer, body: { credential: device.create(regOptions.body) } }, 400);
    await call("GET", "/api/v1/auth/passkeys", { bearer }, 200);
    await call("PATCH", `/api/v1/auth/passkeys/${passkey.body.passkey.id}`, { bearer, body: { name: "Work laptop" } }, 200);
    await call("PATCH", "/api/v1/auth/passkeys/pk_nope", { bearer, body: { name: "x" } }, 404);
    const signInOptions = await call("POST", "/api/v1/auth/passkeys/options", { key: pk, body: { email: "alice@example.com" } }, 200);
    const assertion = device.get(signInOptions.body, { credential: device.credentials[0] });
    await call("POST", "/api/v1/auth/passkeys/sign-in", { key: pk, body: { credential: assertion } }, 200);
    await call("POST", "/api/v1/auth/passkeys/sign-in", { key: pk, body: { credential: assertion } }, 400);
    const enrol = await call("POST", "/api/v1/auth/mfa/totp", { bearer, body: {} }, 200);
    const rightCode = totpCode(t, enrol.body.secret);
    await call("POST", "/api/v1/auth/mfa/totp/confirm", { bearer, body: { code: rightCode === "000000" ? "111111" : "000000" } }, 401);
    await call("POST", "/api/v1/auth/mfa/totp/confirm", { bearer, body: { code: rightCode } }, 200);
    t.clock.advance(30_000);
    await call("GET", "/api/v1/auth/mfa", { bearer }, 200);
    const mfaLogin = await call("POST", "/api/v1/auth/login", { key: pk, body: { email: "alice@example.com", password: "a new password" } }, 200);
    await call("POST", "/api/v1/auth/mfa/verify", { key: pk, body: { mfaTicket: mfaLogin.body.mfaTicket, code: totpCode(t, enrol.body.secret) } }, 200);
    await call("POST", "/api/v1/auth/mfa/verify", { key: pk, body: { mfaTicket: mfaLogin.body.mfaTicket, code: totpCode(t, enrol.body.secret) } }, 400);
    await call("POST", "/api/v1/auth/mfa/recovery-codes", { bearer, body: {} }, 200);
    await call("POST", "/api/v1/auth/reauthenticate", { bearer, body: { password: "wrong password" } }, 401);
    await call("POST", "/api/v1/auth/reauthenticate", { bearer, body: { password: "a new password" } }, 200);
    await call("POST", "/api/v1/auth/change-password", { bearer, body: { newPassword: "a newer password" } }, 200);
    await call("DELETE", "/api/v1/auth/mfa/totp", { bearer }, 204);
    await call("DELETE", `/api/v1/auth/passkeys/${passkey.body.passkey.id}`, { bearer }, 204);
    // The developer's view and repairs, on a second enrolment and passkey.
    const again = await call("POST", "/api/v1/auth/mfa/totp", { bearer, body: {} }, 200);
    await call("POST", "/api/v1/auth/mfa/totp/confirm", { bearer, body: { code: totpCode(t, again.body.secret) } }, 200);
    const regAgain = await call("POST", "/api/v1/auth/passkeys/register/options", { bearer, body: {} }, 200);
    const second = await call("POST", "/api/v1/auth/passkeys/register", { bearer, body: { credential: device.create(regAgain.body) } }, 201);
    await call("GET", `${admin}/tenants/${aliceId}/sign-in-methods`, { developer: dev }, 200);
    await call("DELETE", `${admin}/tenants/${aliceId}/mfa`, { developer: dev }, 204);
    await call("DELETE", `${admin}/tenants/${aliceId}/mfa`, { developer: dev }, 404);
    await call("DELETE", `${admin}/tenants/${aliceId}/passkeys/${second.body.passkey.id}`, { developer: dev }, 204);
    t.clock.advance(11 * 60_000);
    await call("POST", "/api/v1/auth/change-password", { bearer, body: { newPassword: "the newest password" } }, 403);
    await call("POST", "/api/v1/auth/reauthenticate", { bearer, body: { password: "a newer password" } }, 200);

    // Data.
    const rec = await call("POST", "/api/v1/data/notes", { bearer, body: { data: { title: "a", n: 1 } } }, 201);
    const recordId = rec.body.record.id as string;
    await call("POST", "/api/v1/data/notes", { bearer, body: { data: [1] } }, 400);
    await call("GET", `/api/v1/data/notes?filter=${encodeURIComponent('{"n":{"$gte":1}}')}&sort=${encodeURIComponent('{"n":-1}')}&limit=10`, { bearer }, 200);
    await call("GET", `/api/v1/data/notes?filter=${encodeURIComponent('{"n":{"$regex":"x"}}')}`, { bearer }, 400);
    await call("GET", `/api/v1/data/notes?limit=0`, { bearer }, 400);
    await call("GET", `/api/v1/data/notes/${recordId}`, { bearer }, 200);
    await call("GET", `/api/v1/data/notes/rec_nope`, { bearer }, 404);
    await call("PUT", `/api/v1/data/notes/${recordId}`, { bearer, body: { data: { n: 2, title: null } } }, 200);
    await call("POST", "/api/v1/data/notes/upsert", { bearer, body: { data: { title: "b" } } }, 201);
    await call("POST", "/api/v1/batch", { bearer, body: { operations: [{ op: "create", collection: "notes", data: { n: 3 } }, { op: "delete", collection: "notes", id: "rec_nope" }] } }, 404);
    const batch = { bearer, body: { operations: [{ op: "create", collection: "notes", data: { n: 3 } }, { op: "increment", featureKey: "batch" }] }, headers: { "idempotency-key": "every-endpoint" } };
    await call("POST", "/api/v1/batch", batch, 200);
    await call("POST", "/api/v1/batch", { ...batch, body: { operations: [] } }, 400);
    await call("POST", "/api/v1/batch", { ...batch, body: { operations: [{ op: "increment", featureKey: "other" }] } }, 409);
    const firstPage = await call("GET", "/api/v1/data/notes?limit=1", { bearer }, 200);
    await call("GET", `/api/v1/data/notes?limit=1&after=${encodeURIComponent(firstPage.body.next)}`, { bearer }, 200);
    await call("GET", `/api/v1/data/notes?limit=1&sort=${encodeURIComponent('{"n":1}')}&after=${encodeURIComponent(firstPage.body.next)}`, { bearer }, 400);
    const share = await call("POST", `/api/v1/data/notes/${recordId}/share`, { bearer, body: { expiresInSeconds: 60 } }, 201);
    await call("GET", `/api/v1/public/shared/${share.body.shareToken.token}`, {}, 200);
    await call("GET", `/api/v1/public/shared/shr_nope`, {}, 404);
    await call("DELETE", `/api/v1/data/notes/${recordId}/share`, { bearer }, 200);
    await call("DELETE", `/api/v1/data/notes/${recordId}`, { bearer }, 204);
    await call("DELETE", `/api/v1/data/notes/${recordId}`, { bearer }, 404);

    // Files.
    const png = sample("png");
    const upload = await call("POST", "/api/v1/files/upload", {
      bearer,
      raw: multipart([{ name: "file", filename: "a.png", type: "image/png", data: png }]),
      headers: { "content-type": "multipart/form-data; boundary=----tenantdTestBoundary7MA4YWxkTrZu0gW" },
    }, 201);
    const file = upload.body.file as { id: string; url: string };
    await call("POST", "/api/v1/files/upload", {
      bearer,
      raw: multipart([{ name: "file", filename: "a.html", type: "text/html", data: Buffer.from("<html><script>1</script></html>") }]),
      headers: { "content-type": "multipart/form-data; boundary=----tenantdTestBoundary7MA4YWxkTrZu0gW" },
    }, 415);
    await call("GET", `/api/v1/files/${file.id}`, { bearer }, 200);
    const publicPath = new URL(file.url).pathname;
    await call("GET", publicPath, {}, 200);
    await call("GET", publicPath, { headers: { range: "bytes=0-3" } }, 206);
    await call("GET", publicPath, { headers: { range: "bytes=999999-" } }, 416);
    await call("DELETE", `/api/v1/files/${file.id}`, { bearer }, 204);
    await call("GET", publicPath, {}, 404);

    // Billing (development provider) and its admin side.
    await call("POST", `${admin}/plans`, { developer: dev, body: { name: "x" } }, 400);
    const plan = (await call("POST", `${admin}/plans`, { developer: dev, body: { name: "Family", slug: "family", priceCents: 900, entitlements: { family_seats: 2, invites: 5, projects: 3 } } }, 201)).body.plan;
    await call("GET", `${admin}/plans?archived=true`, { developer: dev }, 200);
    await call("PATCH", `${admin}/plans/${plan.id}`, { developer: dev, body: { description: "For families" } }, 200);
    await call("GET", "/api/v1/billing/plans", { key: pk }, 200);
    const checkout = await call("POST", "/api/v1/billing/checkout", { bearer, body: { planId: plan.id, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" } }, 200);
    const checkoutPath = new URL(checkout.body.url).pathname;
    await call("GET", checkoutPath, {}, 200);
    await call("POST", checkoutPath, form({ action: "confirm" }), 303);
    await call("GET", "/api/v1/billing/subscription", { bearer }, 200);
    await call("GET", "/api/v1/billing/entitlements", { bearer }, 200);
    const portal = await call("POST", "/api/v1/billing/portal", { bearer, body: { returnUrl: "https://app.example.com/account" } }, 200);
    const portalPath = new URL(portal.body.url).pathname;
    await call("GET", portalPath, {}, 200);
    await call("POST", portalPath, form({ action: "nothing-known" }), 400);
    await call("POST", portalPath, form({ action: "cancel" }), 303);
    await call("GET", "/api/v1/billing/usage/projects", { bearer }, 200);
    await call("POST", "/api/v1/billing/usage/projects/increment", { bearer, body: { by: 3 } }, 200);
    await call("POST", "/api/v1/billing/usage/projects/increment", { bearer, body: { by: 1 } }, 402);
    await call("GET", "/api/v1/billing/usage/projects?period=daily", { bearer }, 200);
    await call("GET", "/api/v1/billing/usage/bad%20key", { bearer }, 400);
    await call("GET", `${admin}/tenants/${aliceId}/billing`, { developer: dev }, 200);
    await call("POST", `${admin}/tenants/${aliceId}/billing/gift`, { developer: dev, body: { planId: plan.id, days: 30 } }, 200);
    await call("DELETE", `${admin}/tenants/${aliceId}/billing/gift`, { developer: dev }, 204);
    await call("POST", `${admin}/tenants/${aliceId}/billing/trial`, { developer: dev, body: { planId: plan.id, days: 7 } }, 200);
    await call("DELETE", `${admin}/tenants/${aliceId}/billing/trial`, { developer: dev }, 204);
    await call("DELETE", `${admin}/tenants/${aliceId}/billing/trial`, { developer: dev }, 404);
    await call("POST", `${admin}/tenants/${aliceId}/billing/trial`, { developer: dev, body: { planId: plan.id, days: 7 } }, 200);
    await call("POST", `${admin}/plans/${plan.id}/sync-stripe`, { developer: dev }, 409);

    // Invites and family (alice holds the family plan through the dev checkout).
    const invite = await call("POST", "/api/v1/tenants/me/invite-tokens", { bearer, body: { note: "for bob" } }, 201);
    await call("GET", "/api/v1/tenants/me/invite-tokens", { bearer }, 200);
    await call("DELETE", `/api/v1/tenants/me/invite-tokens/${invite.body.token.id}`, { bearer }, 200);
    await call("DELETE", `/api/v1/tenants/me/invite-tokens/inv_nope`, { bearer }, 404);
    const fam = await call("POST", "/api/v1/tenants/me/family-invites", { bearer, body: {} }, 201);
    await call("GET", "/api/v1/tenants/me/family-invites", { bearer }, 200);
    const joined = await call("POST", "/api/v1/auth/family-invite/consume", { key: pk, body: { token: fam.body.invite.token, email: "bob@example.com", password: PASSWORD } }, 201);
    const bob = { accessToken: joined.body.accessToken as string, appId: app.id };
    await call("POST", "/api/v1/auth/family-invite/consume", { key: pk, body: { token: fam.body.invite.token, email: "carol@example.com", password: PASSWORD } }, 400);
    await call("GET", "/api/v1/tenants/me/family/members", { bearer }, 200);
    await call("POST", "/api/v1/tenants/me/family/leave", { bearer: bob, body: {} }, 200);
    const fam2 = await call("POST", "/api/v1/tenants/me/family-invites", { bearer, body: { expiresInSeconds: 3600 } }, 201);
    const existing = await call("POST", "/api/v1/auth/family-invite/consume", { key: pk, body: { token: fam2.body.invite.token, email: "bob@example.com", password: PASSWORD } }, 200);
    void existing;
    await call("POST", "/api/v1/tenants/me/replace-with-family", { bearer: bob, body: { token: fam2.body.invite.token } }, 200);
    await call("POST", "/api/v1/tenants/me/family/remove-member", { bearer, body: { member_tenant_id: joined.body.tenant.id } }, 200);
    const fam3 = await call("POST", "/api/v1/tenants/me/family-invites", { bearer, body: {} }, 201);
    await call("DELETE", `/api/v1/tenants/me/family-invites/${fam3.body.invite.id}`, { bearer }, 200);

    // Social login: start, the fake provider's answer, the callback (GET and Apple's POST).
    await call("GET", `/api/v1/auth/oauth/github?appId=${app.id}&redirect=${encodeURIComponent("https://evil.example.com/")}`, {}, 400);
    await call("GET", `/api/v1/auth/oauth/nope?appId=${app.id}`, {}, 404);
    for (const provider of ["github", "apple"] as const) {
      const start = await call("GET", `/api/v1/auth/oauth/${provider}?appId=${app.id}&redirect=${encodeURIComponent(REDIRECT)}`, {}, 302);
      oauth.next(provider, { id: "1001", email: `social-${provider}@example.com` });
      const res = await fetch(oauth.rewrite(start.headers.get("location")!), { redirect: "manual" });
      const cookie = (start.headers.get("set-cookie") ?? "").split(";")[0]!;
      if (res.status === 302) {
        const back = new URL(res.headers.get("location")!);
        await call("GET", back.pathname + back.search, { headers: { cookie } }, 302);
      } else {
        const { formPost } = (await res.json()) as { formPost: { action: string; fields: Record<string, string> } };
        const f = form(formPost.fields);
        await call("POST", new URL(formPost.action).pathname, { raw: f.raw, headers: { ...f.headers, cookie } }, 302);
      }
    }
    await call("POST", "/api/v1/auth/oauth/github/callback", form({ state: "x" }), 405);
    await call("GET", "/api/v1/auth/providers", { bearer }, 200);

    // Webhooks configuration and log, and the default app's tenants as the admin sees them.
    const receiver = await startReceiver();
    await call("PUT", `${admin}/event-webhook-config`, { developer: dev, body: { url: "not a url" } }, 400);
    await call("PUT", `${admin}/event-webhook-config`, { developer: dev, body: { url: receiver.url } }, 200);
    await call("PUT", `${admin}/event-webhook-config`, { developer: dev, body: { url: receiver.url } }, 200);
    await call("GET", `${admin}/event-webhook-config`, { developer: dev }, 200);
    await call("POST", `${admin}/event-webhook-config/rotate-secret`, { developer: dev }, 200);
    await call("POST", `${admin}/event-webhook-config/test`, { developer: dev }, 202);
    await call("GET", `${admin}/tenants?email=alice&limit=5`, { developer: dev }, 200);
    await call("GET", `${admin}/tenants?verified=true&sort=email&createdFrom=2020-01-01&plan=${plan.id}`, { developer: dev }, 200);
    await call("GET", `${admin}/tenants?sort=age`, { developer: dev }, 400);
    await call("GET", `${admin}/tenants/${aliceId}`, { developer: dev }, 200);
    await call("GET", `${admin}/tenants/ten_nope`, { developer: dev }, 404);

    // The dashboard's tenant page: overview, records, files (preview, delete), sign-out everywhere.
    const tenantPage = `${admin}/tenants/${aliceId}`;
    await call("GET", `${tenantPage}/overview`, { developer: dev }, 200);
    await call("GET", `${admin}/tenants/ten_nope/overview`, { developer: dev }, 404);
    await call("GET", `${tenantPage}/records/notes?sort=${encodeURIComponent('{"title":1}')}&limit=5`, { developer: dev }, 200);
    await call("GET", `${tenantPage}/records/notes?filter=${encodeURIComponent('{"n":{"$regex":"x"}}')}`, { developer: dev }, 400);
    // The records browser's live view (src/realtime/admin-live.ts).
    (await openStream(`${tenantPage}/records/notes/live?filter=${encodeURIComponent('{"n":1}')}`, { authorization: `Bearer ${dev}` })).close();
    await call("GET", `${tenantPage}/records/notes/live?filter=${encodeURIComponent('{"n":{"$regex":"x"}}')}`, { developer: dev }, 400);
    await call("GET", `${admin}/tenants/ten_nope/records/notes/live`, { developer: dev }, 404);
    // The dashboard's tools: records edited for a tenant, a tenant created and vouched for.
    const made = await call("POST", `${tenantPage}/records/drafts`, { developer: dev, body: { data: { title: "by the developer", n: 1 } } }, 201);
    await call("POST", `${tenantPage}/records/drafts`, { developer: dev, body: { data: [1] } }, 400);
    await call("PUT", `${tenantPage}/records/drafts/${made.body.record.id}`, { developer: dev, body: { data: { n: 2 } } }, 200);
    await call("DELETE", `${tenantPage}/records/drafts/${made.body.record.id}`, { developer: dev }, 204);
    await call("DELETE", `${tenantPage}/records/drafts/${made.body.record.id}`, { developer: dev }, 404);
    await call("POST", `${tenantPage}/records/drafts`, { developer: dev, body: { data: { n: 3 } } }, 201);
    await call("POST", `${tenantPage}/records/drafts/bulk-delete`, { developer: dev, body: { filter: '{"n": 3}', confirm: 2 } }, 409);
    await call("POST", `${tenantPage}/records/drafts/bulk-delete`, { developer: dev, body: { filter: '{"n": 3}', confirm: 1 } }, 200);
    const dave = await call("POST", `${admin}/tenants`, { developer: dev, body: { email: "dave@example.com" } }, 201);
    await call("POST", `${admin}/tenants`, { developer: dev, body: { email: "dave@example.com" } }, 409);
    await call("POST", `${admin}/tenants/${dave.body.tenant.id}/verify`, { developer: dev }, 200);
    await call("POST", `${admin}/tenants/${dave.body.tenant.id}/verify`, { developer: dev }, 409);
    await call("POST", `${admin}/tenants/${dave.body.tenant.id}/sign-in/disable`, { developer: dev }, 200);
    await call("POST", `${admin}/tenants/${dave.body.tenant.id}/sign-in/enable`, { developer: dev }, 200);
    // Dashboard backups copy a SQLite data directory: run on a SQLite backend whichever engine this run uses.
    const onSqlite = await startBackend({ database: undefined });
    const sqliteUrl = (await serveHttp(onSqlite.backend)).url;
    const ops = await developerSession(onSqlite, "ops@example.com");
    const opsId = (await onSqlite.request("GET", "/api/v1/developer/me", { developer: ops })).body.developer.id as string;
    await call("POST", "/api/v1/admin/backups", { developer: ops, body: { password: "developer password" } }, 403, sqliteUrl);
    await onSqlite.backend.core.db.developers.setBackupOperator(opsId, true, onSqlite.clock());
    const backup = await call("POST", "/api/v1/admin/backups", { developer: ops, body: { password: "developer password" } }, 201, sqliteUrl);
    await call("POST", "/api/v1/admin/backups", { developer: ops, body: { password: "wrong password" } }, 401, sqliteUrl);
    await call("GET", "/api/v1/admin/backups", { developer: ops }, 200, sqliteUrl);
    const backupLink = await call("POST", `/api/v1/admin/backups/${backup.body.backup.name}/download-link`, { developer: ops, body: { password: "developer password" } }, 200, sqliteUrl);
    await call("GET", `/api/v1/${backupLink.body.path}`, { developer: ops }, 200, sqliteUrl);
    await call("GET", `/api/v1/${backupLink.body.path}`, { developer: ops }, 404, sqliteUrl);
    const seeAs = await call("POST", `${admin}/tenants/${dave.body.tenant.id}/impersonate`, { developer: dev }, 201);
    await call("POST", "/api/v1/auth/logout", { bearer: { accessToken: seeAs.body.accessToken, appId: seeAs.body.appId }, body: {} }, 403);
    await call("POST", "/api/v1/auth/introspect", { key: pk, body: {}, headers: { authorization: `Bearer ${seeAs.body.accessToken}` } }, 200);
    await call("DELETE", `${admin}/tenants/${dave.body.tenant.id}/impersonate/${seeAs.body.sessionId}`, { developer: dev }, 204);
    await call("DELETE", `${admin}/tenants/${dave.body.tenant.id}/impersonate/${seeAs.body.sessionId}x`, { developer: dev }, 404);
    const multipartHeaders = { "content-type": "multipart/form-data; boundary=----tenantdTestBoundary7MA4YWxkTrZu0gW" };
    const image = (await call("POST", "/api/v1/files/upload", { bearer, raw: multipart([{ name: "file", filename: "b.png", type: "image/png", data: png }]), headers: multipartHeaders }, 201)).body.file as { id: string };
    const textFile = (await call("POST", "/api/v1/files/upload", { bearer, raw: multipart([{ name: "file", filename: "b.txt", type: "text/plain", data: Buffer.from("plain words") }]), headers: multipartHeaders }, 201)).body.file as { id: string };
    await call("GET", `${tenantPage}/files?limit=10`, { developer: dev }, 200);
    await call("GET", `${tenantPage}/files?limit=0`, { developer: dev }, 400);
    await call("GET", `${tenantPage}/files/${image.id}/preview`, { developer: dev }, 200);
    await call("GET", `${tenantPage}/files/${textFile.id}/preview`, { developer: dev }, 415);
    await call("DELETE", `${tenantPage}/files/${image.id}`, { developer: dev }, 204);
    await call("DELETE", `${tenantPage}/files/${image.id}`, { developer: dev }, 404);
    await call("GET", `${tenantPage}/files/${image.id}/preview`, { developer: dev }, 404);

    const carol = await call("POST", "/api/v1/auth/signup", { key: pk, body: { email: "carol@example.com", password: PASSWORD } }, 201);
    await call("POST", `${admin}/tenants/${carol.body.tenant.id}/sessions/end`, { developer: dev }, 200);
    await call("POST", `${admin}/tenants/${carol.body.tenant.id}/sessions/end`, {}, 401);
    await call("DELETE", `${admin}/tenants/${carol.body.tenant.id}`, { developer: dev }, 204);
    const log = await call("GET", `${admin}/webhook-deliveries?limit=10`, { developer: dev }, 200);
    await call("GET", `${admin}/webhook-deliveries/${(log.body.deliveries as { id: string }[])[0]!.id}`, { developer: dev }, 200);
    await call("GET", `${admin}/webhook-deliveries/evt_nope`, { developer: dev }, 404);
    await call("POST", `${admin}/webhook-deliveries/${(log.body.deliveries as { id: string }[])[0]!.id}/redeliver`, { developer: dev }, 202);
    await call("POST", `${admin}/webhook-deliveries/evt_nope/redeliver`, { developer: dev }, 404);
    await call("GET", `${admin}/webhook-deliveries?status=failed`, { developer: dev }, 200);
    await call("GET", `${admin}/webhook-deliveries?event=webhook.test&status=delivered`, { developer: dev }, 200);
    await call("GET", `${admin}/webhook-deliveries?status=lost`, { developer: dev }, 400);
    await call("GET", "/api/v1/admin/cron", { developer: dev }, 200);
    const trail = await call("GET", `${admin}/audit?limit=2`, { developer: dev }, 200);
    await call("GET", `${admin}/audit?action=tenant.*&cursor=${trail.body.nextCursor}`, { developer: dev }, 200);
    await call("GET", `${admin}/audit?limit=0`, { developer: dev }, 400);
    await call("DELETE", `${admin}/event-webhook-config`, { developer: dev }, 204);
    await call("POST", `${admin}/event-webhook-config/test`, { developer: dev }, 404);
    await call("GET", `${admin}/outbox?limit=5`, { developer: dev }, 200);
    await call("GET", `${admin}/email/previews`, { developer: dev }, 200);
    await call("GET", `${admin}/access-log?status=2&limit=5`, { developer: dev }, 200);
    await call("GET", `${admin}/access-log?status=9`, { developer: dev }, 400);
    await call("POST", `${admin}/email/test`, { developer: dev, body: { to: "dev-inbox@example.com" } }, 200);
    await call("POST", `${admin}/email/test`, { developer: dev, body: { to: "nobody" } }, 400);
    await call("GET", `${admin}/indexes`, { developer: dev }, 200);
    await call("GET", `${admin}/indexes`, {}, 401);
    await call("GET", `${admin}/outbox?limit=0`, { developer: dev }, 400);

    // Plans archive, Stripe: an app with Stripe keys syncs a plan and takes a signed event.
    await call("POST", `${admin}/plans/${plan.id}/archive`, { developer: dev }, 200);
    await call("POST", `${admin}/plans/${plan.id}/unarchive`, { developer: dev }, 200);
    await call("PATCH", admin, { developer: dev, body: { settings: { billing: { stripeSecretKey: STRIPE_SECRET, stripeWebhookSecret: STRIPE_WEBHOOK_SECRET } } } }, 200);
    await call("POST", `${admin}/plans/${plan.id}/sync-stripe`, { developer: dev }, 200);
    const { payload, signature } = stripeFake.signedEvent(STRIPE_WEBHOOK_SECRET, "customer.created", { id: "cus_contract", object: "customer" });
    await call("POST", `/api/v1/billing/stripe/webhook/${app.id}`, { raw: payload, headers: { "content-type": "application/json", "stripe-signature": signature } }, 200);
    await call("POST", `/api/v1/billing/stripe/webhook/${app.id}`, { raw: payload, headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" } }, 400);
    void Stripe;

    // Organizations: create, invite by link (a sign-up joins), roles, transfer, remove, leave, delete.
    const orgs = "/api/v1/orgs";
    const org = (await call("POST", orgs, { bearer, body: { name: "Acme" } }, 201)).body.org as { id: string };
    await call("POST", orgs, { bearer, body: { name: "" } }, 400);
    await call("GET", orgs, { bearer }, 200);
    await call("GET", `${orgs}/${org.id}`, { bearer }, 200);
    await call("GET", `${orgs}/org_nope`, { bearer }, 404);
    await call("GET", `${admin}/orgs?limit=5`, { developer: dev }, 200);
    await call("GET", `${admin}/orgs?limit=0`, { developer: dev }, 400);
    await call("GET", `${admin}/orgs/${org.id}?limit=1`, { developer: dev }, 200);
    await call("GET", `${admin}/orgs/org_nope`, { developer: dev }, 404);
    await call("GET", `${admin}/tenants/${aliceId}/orgs`, { developer: dev }, 200);
    await call("GET", `${admin}/tenants/ten_nope/orgs`, { developer: dev }, 404);
    const doomed = (await call("POST", orgs, { bearer, body: { name: "Doomed" } }, 201)).body.org as { id: string };
    await call("DELETE", `${admin}/orgs/${doomed.id}`, { developer: dev }, 204);
    await call("DELETE", `${admin}/orgs/${doomed.id}`, { developer: dev }, 404);
    await call("PATCH", `${orgs}/${org.id}`, { bearer, body: { name: "Acme Inc" } }, 200);
    const orgLink = (await call("POST", `${orgs}/${org.id}/invites`, { bearer, body: { role: "admin" } }, 201)).body.invite as { id: string; token: string };
    await call("POST", `${orgs}/${org.id}/invites`, { bearer, body: { role: "janitor" } }, 400);
    await call("GET", `${orgs}/${org.id}/invites`, { bearer }, 200);
    const orgJoined = await call("POST", "/api/v1/auth/signup", { key: pk, body: { email: "org-member@example.com", password: PASSWORD, inviteToken: orgLink.token } }, 201);
    const member = { id: orgJoined.body.tenant.id as string, bearer: { accessToken: orgJoined.body.accessToken as string, appId: app.id } };
    await call("POST", `${orgs}/invites/accept`, { bearer: member.bearer, body: { token: orgLink.token } }, 409);
    await call("POST", `${orgs}/invites/accept`, { bearer, body: { token: "org_nope" } }, 400);
    await call("GET", `${orgs}/${org.id}/members?limit=1`, { bearer }, 200);
    await call("GET", `${orgs}/${org.id}/members?after=x`, { bearer }, 400);
    // Organization records: the data routes under the organization (docs/organizations.md#organization-records).
    const orgRecords = `${orgs}/${org.id}/collections/tasks/records`;
    const task = (await call("POST", orgRecords, { bearer, body: { data: { code: "t1", n: 1 } } }, 201)).body.record as { id: string };
    await call("GET", `${orgRecords}?filter=${encodeURIComponent('{"n":{"$gte":1}}')}&limit=10`, { bearer: member.bearer }, 200);
    await call("GET", `${orgRecords}/${task.id}`, { bearer: member.bearer }, 200);
    await call("PUT", `${orgRecords}/${task.id}`, { bearer: member.bearer, body: { data: { n: 2 } } }, 200);
    await call("POST", `${orgRecords}/upsert`, { bearer, body: { data: { code: "t2" } } }, 201);
    await call("POST", `${orgs}/${org.id}/batch`, { bearer, body: { operations: [{ op: "create", collection: "tasks", data: { code: "t3" } }] } }, 200);
    await call("POST", `${orgRecords}/${task.id}/share`, { bearer, body: {} }, 201);
    await call("DELETE", `${orgRecords}/${task.id}/share`, { bearer }, 200);
    await call("DELETE", `${orgRecords}/${task.id}`, { bearer }, 204);
    await call("GET", `${orgRecords}/${task.id}`, { bearer }, 404);
    await call("GET", "/api/v1/data/tasks", { bearer }, 400);
    await call("GET", `${orgs}/org_nope/collections/tasks/records`, { bearer }, 404);
    await call("PATCH", `${orgs}/${org.id}/members/${member.id}`, { bearer, body: { role: "member" } }, 200);
    await call("PATCH", `${orgs}/${org.id}`, { bearer: member.bearer, body: { name: "Mine" } }, 403);
    // Its billing: a Stripe checkout for 3 seats, Stripe's event, seats, the portal, usage, the developer's gift and trial.
    const orgBilling = `${orgs}/${org.id}/billing`;
    const backTo = { successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" };
    await call("GET", orgBilling, { bearer: member.bearer }, 200);
    await call("GET", `${orgs}/org_nope/billing`, { bearer }, 404);
    await call("POST", `${orgBilling}/checkout`, { bearer: member.bearer, body: { planId: plan.id, ...backTo } }, 403);
    await call("POST", `${orgBilling}/checkout`, { bearer, body: { planId: plan.id, seats: 0, ...backTo } }, 400);
    await call("POST", `${orgBilling}/portal`, { bearer, body: { returnUrl: "https://app.example.com/billing" } }, 409);
    await call("PUT", `${orgBilling}/seats`, { bearer, body: { seats: 3 } }, 409);
    await call("POST", `${orgBilling}/checkout`, { bearer, body: { planId: plan.id, seats: 3, ...backTo } }, 200);
    const paid = stripeFake.completeCheckout([...stripeFake.store.sessions.keys()].pop()!);
    const completed = stripeFake.signedEvent(STRIPE_WEBHOOK_SECRET, "checkout.session.completed", paid.session);
    await call("POST", `/api/v1/billing/stripe/webhook/${app.id}`, { raw: completed.payload, headers: { "content-type": "application/json", "stripe-signature": completed.signature } }, 200);
    await call("PUT", `${orgBilling}/seats`, { bearer, body: { seats: 4 } }, 200);
    await call("PUT", `${orgBilling}/seats`, { bearer, body: { seats: 1 } }, 409);
    await call("POST", `${orgBilling}/portal`, { bearer, body: { returnUrl: "https://app.example.com/billing" } }, 200);
    await call("GET", `${orgBilling}/usage/projects?period=daily`, { bearer: member.bearer }, 200);
    await call("POST", `${orgBilling}/usage/projects/increment`, { bearer: member.bearer, body: { by: 2 } }, 200);
    await call("POST", `${orgBilling}/usage/projects/increment`, { bearer, body: { by: 5 } }, 402);
    await call("GET", `${admin}/orgs/${org.id}/billing`, { developer: dev }, 200);
    await call("POST", `${admin}/orgs/${org.id}/billing/gift`, { developer: dev, body: { planId: plan.id, days: 30 } }, 200);
    await call("DELETE", `${admin}/orgs/${org.id}/billing/gift`, { developer: dev }, 204);
    await call("POST", `${admin}/orgs/${org.id}/billing/trial`, { developer: dev, body: { planId: plan.id, days: 7 } }, 200);
    await call("DELETE", `${admin}/orgs/${org.id}/billing/trial`, { developer: dev }, 204);
    await call("DELETE", `${admin}/orgs/${org.id}/billing/trial`, { developer: dev }, 404);
    await call("POST", `${orgs}/${org.id}/leave`, { bearer }, 409);
    await call("POST", `${orgs}/${org.id}/transfer`, { bearer, body: { tenantId: member.id } }, 200);
    await call("DELETE", `${orgs}/${org.id}/invites/${orgLink.id}`, { bearer: member.bearer }, 204);
    await call("DELETE", `${orgs}/${org.id}/members/${aliceId}`, { bearer: member.bearer }, 204);
    const orgAgain = (await call("POST", `${orgs}/${org.id}/invites`, { bearer: member.bearer, body: {} }, 201)).body.invite as { token: string };
    await call("POST", `${orgs}/invites/accept`, { bearer, body: { token: orgAgain.token } }, 200);
    await call("POST", `${orgs}/${org.id}/leave`, { bearer }, 204);
    await call("DELETE", `${orgs}/${org.id}`, { bearer }, 404);
    await call("DELETE", `${orgs}/${org.id}`, { bearer: member.bearer }, 204);

    // Account deletion, developer logout, app deletion, routing fallbacks.
    await call("POST", "/api/v1/tenants/me/delete", { bearer }, 200);
    await call("PUT", "/api/v1/auth/me", { bearer }, 405);
    await call("GET", "/api/v1/nothing-here", {}, 404);
    await call("DELETE", admin, { developer: dev }, 204);
    await call("POST", "/api/v1/developer/logout", { developer: dev }, 204);
    await call("GET", "/api/v1/developer/me", { developer: dev }, 401);
    void key;
    void appId;
  } finally {
    restoreFetch();
    await oauth.close();
    await stripeFake.close();
  }
  return { exchanges, t, url };
}
