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

    // Cheap requests, one after another, while the logins are in flight.
    const cheap: { status: number; beforeLoginsDone: boolean }[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id } });
      await res.arrayBuffer();
      cheap.push({ status: res.status, beforeLoginsDone: !loginsDone });
    }
    const statuses = await logins;

    expect(statuses.sort()).toEqual([...Array(10).fill(200), ...Array(10).fill(401)]);
    expect(cheap).toEqual(Array(10).fill({ status: 200, beforeLoginsDone: true }));
  });
});
