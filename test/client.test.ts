import { describe, expect, it } from "vitest";
import { createClient, memoryStorage, TenantdError } from "../src/client/index.ts";
import { tokenFromOutbox } from "./_email.ts";
import { clientBackend, inProcessLocks, PASSWORD } from "./client-helpers.ts";

const MINUTE = 60_000;

/** The error a promise rejects with (fails the test when it resolves). */
async function refusal(p: Promise<unknown>): Promise<TenantdError> {
  const outcome = await p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(TenantdError);
  return outcome.error as TenantdError;
}

describe("tenantd/client auth", () => {
  it("runs the full auth cycle over HTTP: sign up, me, sign out, sign in, verify, reset, introspect", async () => {
    const { t, client } = await clientBackend();
    const c = client();
    const tenant = await c.auth.signUp({ email: "Ann@Example.com", password: PASSWORD });
    expect(tenant.email).toBe("ann@example.com");
    expect((await c.auth.getSession())?.tenant?.id).toBe(tenant.id);
    expect((await c.auth.me()).id).toBe(tenant.id);

    await c.auth.signOut();
    expect(await c.auth.getSession()).toBeNull();
    const signedOut = await refusal(c.auth.me());
    expect([signedOut.status, signedOut.code]).toEqual([401, "unauthorized"]);

    const wrong = await refusal(c.auth.signIn({ email: "ann@example.com", password: "not the password" }));
    expect([wrong.status, wrong.code, wrong.isNetworkError]).toEqual([401, "invalid_credentials", false]);
    await c.auth.signIn({ email: "ann@example.com", password: PASSWORD });

    await c.auth.resendVerification({ locale: "nl" });
    await c.auth.verifyEmail(await tokenFromOutbox(t, "ann@example.com", "verify"));
    expect((await c.auth.me()).emailVerifiedAt).not.toBeNull();
    expect((await refusal(c.auth.resendVerification())).code).toBe("already_verified");

    const live = await c.auth.introspect({ include: ["tenant"] });
    expect([live.active, live.tenantId, live.tenant?.email]).toEqual([true, tenant.id, "ann@example.com"]);

    await c.auth.requestPasswordReset({ email: "ann@example.com" });
    await c.auth.resetPassword({ token: await tokenFromOutbox(t, "ann@example.com", "reset"), password: "a brand new password" });
    // The reset ended every session: the next call tells the app and signs out.
    const ended = await refusal(c.auth.me());
    expect(ended.code).toBe("session_ended");
    expect(await c.auth.getSession()).toBeNull();
    expect((await c.auth.introspect()).active).toBe(false);
    await c.auth.signIn({ email: "ann@example.com", password: "a brand new password" });
    expect(c.eventNames()).toEqual(["SIGNED_IN", "SIGNED_OUT", "SIGNED_IN", "SESSION_ENDED", "SIGNED_IN"]);
  });

  it("refreshes an access token expired on the server's clock, transparently, and retries the request", async () => {
    const { t, client, refreshes } = await clientBackend();
    const c = client();
    await c.auth.signUp({ email: "exp@example.com", password: PASSWORD });
    const before = (await c.auth.getSession())!;
    t.clock.advance(16 * MINUTE);
    const record = await c.collection<{ title: string }>("notes").create({ title: "after expiry" });
    expect(record.data.title).toBe("after expiry");
    const after = (await c.auth.getSession())!;
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(refreshes).toHaveLength(1);
    expect(c.eventNames()).toEqual(["SIGNED_IN", "TOKEN_REFRESHED"]);
  });

  it("20 concurrent requests with an expired token cause exactly one refresh", async () => {
    const { t, client, refreshes, holdUntil } = await clientBackend();
    const c = client();
    await c.auth.signUp({ email: "many@example.com", password: PASSWORD });
    t.clock.advance(16 * MINUTE);
    const notes = c.collection<{ n: number }>("notes");
    holdUntil(20, (u) => u.endsWith("/api/v1/data/notes"));
    const created = await Promise.all(Array.from({ length: 20 }, (_, n) => notes.create({ n })));
    expect(created.map((r) => r.data.n)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    expect(refreshes).toHaveLength(1);
    expect((await notes.list({ limit: 100 })).total).toBe(20);
  });

  for (const mode of ["storage protocol (no navigator.locks)", "navigator.locks"] as const) {
    it(`two tabs sharing storage refresh at once: one rotation, neither signed out (${mode})`, async () => {
      const { t, client, refreshes, holdUntil } = await clientBackend();
      const storage = memoryStorage();
      const locks = mode === "navigator.locks" ? inProcessLocks() : undefined;
      const tab1 = client({ storage, name: "tab1", ...(locks ? { locks } : {}) });
      const tab2 = client({ storage, name: "tab2", ...(locks ? { locks } : {}) });
      await tab1.auth.signUp({ email: `tabs-${mode.length}@example.com`, password: PASSWORD });
      t.clock.advance(16 * MINUTE);
      holdUntil(4, (u) => u.endsWith("/api/v1/auth/me"));
      const [a, b] = await Promise.all([tab1.auth.me(), tab2.auth.me(), tab1.auth.me(), tab2.auth.me()]);
      expect(a.id).toBe(b.id);
      expect(refreshes).toHaveLength(1);
      // Each tab went through the lock (a late 401 re-checks storage under it, without a rotation).
      if (locks) expect(locks.granted).toBeGreaterThanOrEqual(2);
      // Both keep working on the one rotated session, long after the reuse grace window.
      t.clock.advance(MINUTE);
      await Promise.all([tab1.collection("notes").create({ from: "tab1" }), tab2.collection("notes").create({ from: "tab2" })]);
      t.clock.advance(16 * MINUTE);
      await Promise.all([tab1.auth.me(), tab2.auth.me()]);
      expect(refreshes).toHaveLength(2);
      expect([...tab1.eventNames(), ...tab2.eventNames()]).not.toContain("SESSION_ENDED");
      expect(await tab2.auth.getSession()).not.toBeNull();
    });
  }

  it("a reused refresh token ends the session: the client signs out and says SESSION_ENDED", async () => {
    const { t, client } = await clientBackend();
    const storage = memoryStorage();
    const c = client({ storage });
    await c.auth.signUp({ email: "reuse@example.com", password: PASSWORD });
    const stolen = (await c.auth.getSession())!;
    t.clock.advance(16 * MINUTE);
    await c.auth.me(); // rotates the refresh token
    // Later, a stale copy of the old session (a restored backup, a thief) presents the
    // already-rotated refresh token, outside any grace window.
    t.clock.advance(16 * MINUTE);
    const replayStorage = memoryStorage();
    await replayStorage.setItem(`tenantd.${t.app.id}.session`, JSON.stringify(stolen));
    const replay = client({ storage: replayStorage });
    const refused = await refusal(replay.auth.me());
    expect([refused.status, refused.code]).toEqual([401, "session_ended"]);
    expect(replay.events.at(-1)).toMatchObject({ event: "SESSION_ENDED", error: { code: "session_ended" } });
    expect(await replay.auth.getSession()).toBeNull();
    // The server ended the whole session: the honest client is told on its next call too.
    const honest = await refusal(c.auth.me());
    expect(honest.code).toBe("session_ended");
    expect(c.eventNames().at(-1)).toBe("SESSION_ENDED");
  });

  it("tells a network failure apart from an API refusal", async () => {
    const c = createClient({ url: "http://127.0.0.1:9", appId: "app_x", key: "pk_x", storage: memoryStorage() });
    const error = await refusal(c.auth.signIn({ email: "a@example.com", password: PASSWORD }));
    expect([error.status, error.code, error.isNetworkError]).toEqual([0, "network_error", true]);
    const { client } = await clientBackend();
    const api = await refusal(client({ key: "pk_wrong" }).auth.signIn({ email: "a@example.com", password: PASSWORD }));
    expect([api.status, api.code, api.isNetworkError]).toEqual([401, "unauthorized", false]);
    expect(api.message).toContain("x-service-key");
  });
});

describe("tenantd/client options", () => {
  it("a missing or misnamed option is named in the error, before any request", () => {
    const ok = { url: "http://localhost:3000", appId: "app_x", key: "pk_x" };
    expect(() => createClient({ ...ok, url: undefined } as never)).toThrow(new TypeError("createClient: `url` is required, where tenantd runs, e.g. https://api.example.com."));
    expect(() => createClient({ baseUrl: ok.url, appId: ok.appId, key: ok.key } as never)).toThrow(/`url` is required.*not `baseUrl`/);
    expect(() => createClient({ url: ok.url, appId: ok.appId, publishableKey: ok.key } as never)).toThrow(/`key` is required, the app's publishable key.*not `publishableKey`/);
    expect(() => createClient({ url: ok.url, key: ok.key, appId: "" })).toThrow(/`appId` is required/);
    expect(() => createClient(undefined as never)).toThrow(/pass an options object/);
    expect(createClient(ok).collection("notes")).toBeDefined();
  });
});
