import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TestTenant } from "./_helpers.ts";
import { startFakeOAuth, type FakeOAuth } from "./fake-oauth.ts";
import { CLIENTS, providerSettings, REDIRECT, signInWith } from "./oauth-helpers.ts";
import { claimsOf, familyBackend } from "./family-fixtures.ts";
import { storeRows } from "./_store.ts";

let fake: FakeOAuth;
let restoreFetch: () => void;
beforeAll(async () => {
  fake = await startFakeOAuth(CLIENTS);
});
afterAll(() => fake.close());
beforeEach(() => {
  restoreFetch = fake.interceptFetch();
});
afterEach(() => restoreFetch());

/** A family backend whose app is invite-only and offers Google sign-in. */
async function setup() {
  const f = await familyBackend(1);
  await f.t.backend.admin.updateApp(f.t.app.id, {
    settings: { signupMode: "invite_only", oauth: { redirectUrls: [REDIRECT], providers: { google: providerSettings(fake).google! } } },
  });
  return f;
}

const fromFragment = (fragment: URLSearchParams, appId: string): TestTenant => {
  const accessToken = fragment.get("service_access_token")!;
  return { id: claimsOf(accessToken).sub, email: "", accessToken, refreshToken: fragment.get("service_refresh_token")!, bearer: { accessToken, appId } };
};

describe("social login with invites (the oauth invite hook)", () => {
  it("a family invite makes the new social-login account a member, the same as password sign-up", async () => {
    const f = await setup();
    const invite = await f.invite();
    const { fragment } = await signInWith(f.t, fake, "google", { id: "g-1", email: "kid@example.com", verified: true }, { inviteToken: invite.token });
    expect(fragment.get("service_oauth")).toBe("success");
    const kid = fromFragment(fragment, f.t.app.id);
    expect(claimsOf(kid.accessToken).pid).toBe(f.owner.id);
    expect(await f.view(kid)).toEqual({ entitlements: { family_seats: 1, storage: 100 }, source: "family", familyOwnerEmail: f.owner.email });
    expect((await f.as(f.owner, "GET", "/api/v1/tenants/me/family/members")).body.members).toMatchObject([{ tenantId: kid.id, email: "kid@example.com" }]);

    // Used up: the next person is refused, and with the one seat taken a new invite cannot be made.
    const reuse = await signInWith(f.t, fake, "google", { id: "g-2", email: "other@example.com", verified: true }, { inviteToken: invite.token });
    expect(Object.fromEntries(reuse.fragment)).toEqual({ service_oauth: "error", error: "invalid_token" });
    expect((await f.as(f.owner, "POST", "/api/v1/tenants/me/family-invites", {})).status).toBe(409);
    // A returning account signs in without any invite.
    const back = await signInWith(f.t, fake, "google", { id: "g-1", email: "kid@example.com", verified: true });
    expect(back.fragment.get("service_oauth")).toBe("success");
  });

  it("a full family refuses the social sign-up and creates nothing", async () => {
    const f = await setup();
    await f.setSeats(2);
    const [a, b] = [await f.invite(), await f.invite()];
    await f.setSeats(1);
    expect((await signInWith(f.t, fake, "google", { id: "g-a", email: "a@example.com", verified: true }, { inviteToken: a.token })).fragment.get("service_oauth")).toBe("success");
    const refused = await signInWith(f.t, fake, "google", { id: "g-b", email: "b@example.com", verified: true }, { inviteToken: b.token });
    expect(Object.fromEntries(refused.fragment)).toEqual({ service_oauth: "error", error: "seats_full" });
    const db = storeRows(f.t.backend);
    expect(await db.value("SELECT COUNT(*) FROM tenants WHERE email = 'b@example.com'")).toBe(0);
    expect(await db.value("SELECT COUNT(*) FROM oauth_accounts WHERE provider_account_id = 'g-b'")).toBe(0);
  });

  it("an invite token used through social login records who joined", async () => {
    const f = await setup();
    const token = (await f.as(f.owner, "POST", "/api/v1/tenants/me/invite-tokens", {})).body.token;
    const { fragment } = await signInWith(f.t, fake, "google", { id: "g-9", email: "friend@example.com", verified: true }, { inviteToken: token.token });
    const friend = fromFragment(fragment, f.t.app.id);
    expect((await f.as(f.owner, "GET", "/api/v1/tenants/me/invite-tokens")).body.tokens).toMatchObject([{ id: token.id, status: "used", usedByTenantId: friend.id }]);
    expect(claimsOf(friend.accessToken).pid).toBeNull();
  });
});
