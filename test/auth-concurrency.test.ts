import { describe, expect, it } from "vitest";
import { serveHttp, signupTenant, startBackend } from "./_helpers.ts";
import { OWASP_ARGON2 } from "../src/crypto/password.ts";

describe("password hashing off the event loop", () => {
  it("keeps answering other requests while 20 logins hash at the OWASP cost", async () => {
    const t = await startBackend({ argon2: OWASP_ARGON2 });
    const { url } = await serveHttp(t.backend);
    const tenant = await signupTenant(t, { email: "busy@example.com", password: "correct horse battery" });
    const post = (body: unknown) =>
      fetch(`${url}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", "x-service-key": t.app.publishableKey }, body: JSON.stringify(body) });

    let loginsDone = false;
    const logins = Promise.all(
      Array.from({ length: 20 }, (_, i) => post({ email: "busy@example.com", password: i % 2 ? "correct horse battery" : "wrong password" }).then((r) => r.status)),
    ).finally(() => (loginsDone = true));

    // Cheap requests, one after another, for as long as the logins are in flight.
    const cheap: number[] = [];
    while (!loginsDone) {
      const res = await fetch(`${url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id } });
      await res.arrayBuffer();
      if (!loginsDone) cheap.push(res.status);
    }
    const statuses = await logins;

    expect(statuses.sort()).toEqual([...Array(10).fill(200), ...Array(10).fill(401)]);
    // Hashing on the event loop would let at most the first one through before the logins end.
    expect(cheap.length).toBeGreaterThanOrEqual(3);
    expect(new Set(cheap)).toEqual(new Set([200]));
  });
});
