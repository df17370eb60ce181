// Issue 39 item 5: tenantd/client takes social-login tokens only from a return trip this tab
// started, and never in place of another signed-in account. The spec fixes the fragment
// (service_oauth, service_access_token, service_refresh_token); the binding is added on top:
// the client's random state goes out with the start and must come back as service_state.
import { describe, expect, it } from "vitest";
import { createClient, memoryStorage, type TenantdClient } from "../src/client/index.ts";
import { serveHttp } from "./_helpers.ts";
import { authorize, begin, oauthBackend, REDIRECT, useFakeOAuth } from "./oauth-helpers.ts";
import type { FakeAccount } from "./fake-oauth.ts";
import { PASSWORD } from "./_auth.ts";

const fake = useFakeOAuth();
const noHistory = { replaceState: () => {} };

async function setup() {
  const t = await oauthBackend(fake);
  const { url } = await serveHttp(t.backend);
  const client = () => createClient({ url, appId: t.app.id, key: t.app.publishableKey, storage: memoryStorage(), flowStorage: memoryFlow() });
  /** A browser's whole trip: the start URL, the provider, the callback; the page it lands on. */
  const roundTrip = async (start: string, account: FakeAccount) => {
    const started = await fetch(start, { redirect: "manual" });
    const back = await authorize(fake, "github", started.headers.get("location")!, account);
    const returned = await fetch(url + back.path, { headers: { cookie: started.headers.get("set-cookie")!.split(";")[0]! }, redirect: "manual" });
    return returned.headers.get("location")!;
  };
  return { t, url, client, roundTrip };
}

function memoryFlow() {
  const items = new Map<string, string>();
  return { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v), removeItem: (k: string) => void items.delete(k) };
}

const signedInAs = async (c: TenantdClient) => ((await c.auth.getSession()) ? (await c.auth.me()).email : null);

describe("social login is bound to the tab that started it (issue 39 item 5)", () => {
  it("a crafted link carrying someone else's tokens signs nobody in", async () => {
    const { client, roundTrip } = await setup();
    // The attacker signs in to their own account and keeps the landing URL's tokens.
    const attacker = client();
    const attackerLanding = await roundTrip(attacker.oauthUrl("github", { redirect: REDIRECT }), { id: "666", email: "attacker@example.com" });
    const tokens = new URLSearchParams(attackerLanding.split("#")[1]);
    const crafted = `${REDIRECT}#service_oauth=success&service_access_token=${tokens.get("service_access_token")}&service_refresh_token=${tokens.get("service_refresh_token")}`;

    const victim = client();
    expect(await victim.handleOAuthRedirect(crafted, noHistory)).toEqual({ status: "error", error: "invalid_state" });
    expect(await victim.auth.getSession()).toBeNull();
    // Nor while the victim's own sign-in is under way: the attacker's state is not the victim's.
    victim.oauthUrl("github", { redirect: REDIRECT });
    expect(await victim.handleOAuthRedirect(attackerLanding, noHistory)).toEqual({ status: "error", error: "invalid_state" });
    expect(await victim.auth.getSession()).toBeNull();
  });

  it("the tab that started signs in, once: the same landing URL again is refused", async () => {
    const { client, roundTrip } = await setup();
    const c = client();
    const landing = await roundTrip(c.oauthUrl("github", { redirect: REDIRECT }), { id: "7007", email: "social@example.com" });
    expect(new URLSearchParams(landing.split("#")[1]).get("service_state")).toMatch(/^[\w-]{43}$/);
    expect((await c.handleOAuthRedirect(landing, noHistory))?.status).toBe("success");
    expect(await signedInAs(c)).toBe("social@example.com");
    const later = client();
    expect(await later.handleOAuthRedirect(landing, noHistory)).toEqual({ status: "error", error: "invalid_state" });
  });

  it("never replaces another signed-in account; the unused new session is ended on the server", async () => {
    const { client, roundTrip, url, t } = await setup();
    const c = client();
    await c.auth.signUp({ email: "first@example.com", password: PASSWORD });
    const landing = await roundTrip(c.oauthUrl("github", { redirect: REDIRECT }), { id: "8008", email: "second@example.com" });
    expect(await c.handleOAuthRedirect(landing, noHistory)).toEqual({ status: "error", error: "other_tenant_signed_in" });
    expect(await signedInAs(c)).toBe("first@example.com");
    const refreshToken = new URLSearchParams(landing.split("#")[1]).get("service_refresh_token");
    const refresh = await fetch(`${url}/api/v1/auth/refresh`, { method: "POST", headers: { "content-type": "application/json", "x-service-key": t.app.publishableKey }, body: JSON.stringify({ refreshToken }) });
    expect(refresh.status).toBe(401);

    // The same account signing in again is no replacement: its new session is taken.
    await c.auth.signOut();
    const again = client();
    const first = await roundTrip(again.oauthUrl("github", { redirect: REDIRECT }), { id: "8008", email: "second@example.com" });
    expect((await again.handleOAuthRedirect(first, noHistory))?.status).toBe("success");
    const second = await roundTrip(again.oauthUrl("github", { redirect: REDIRECT }), { id: "8008", email: "second@example.com" });
    expect((await again.handleOAuthRedirect(second, noHistory))?.status).toBe("success");
    expect(await signedInAs(again)).toBe("second@example.com");
  });

  it("the server echoes the state on errors too, only to the browser whose cookie matches, and refuses a malformed one", async () => {
    const { t } = await setup();
    const state = "s".repeat(43);
    const started = await begin(t, "github", { state });
    const back = await authorize(fake, "github", started.location, { error: "access_denied" });
    const denied = await t.request("GET", back.path, { headers: { cookie: started.cookie } });
    expect(denied.headers.get("location")).toBe(`${REDIRECT}#service_oauth=error&error=access_denied&service_state=${state}`);

    const other = await begin(t, "github", { state });
    const elsewhere = await authorize(fake, "github", other.location, { id: "1", email: "x@example.com" });
    const mismatch = await t.request("GET", elsewhere.path, { headers: { cookie: "tenantd_oauth_github=somebody-else" } });
    expect(mismatch.headers.get("location")).toBe(`${REDIRECT}#service_oauth=error&error=invalid_state`);

    const bad = await begin(t, "github", { state: "short" });
    expect(bad.reply.status).toBe(400);
    expect(bad.reply.body.error).toBe("invalid_request");
  });
});
