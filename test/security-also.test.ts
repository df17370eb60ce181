import { describe, expect, it } from "vitest";
import { signupTenant, startBackend, type Reply } from "./_helpers.ts";
import { refresh } from "./_auth.ts";
import { familyBackend } from "./family-fixtures.ts";
import { DRIVERS, sample, startFilesBackend } from "./files-helpers.ts";
import { createSecretBox } from "../src/crypto/secret-box.ts";

const noStore = (r: Reply) => expect({ status: r.status < 300, cacheControl: r.headers.get("cache-control") }).toEqual({ status: true, cacheControl: "no-store" });

describe("review: also", () => {
  it("every token-issuing response carries cache-control: no-store", async () => {
    const t = await startBackend();
    const signup = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "ns@example.com", password: "correct horse battery" } });
    noStore(signup);
    noStore(await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "ns@example.com", password: "correct horse battery" } }));
    noStore(await refresh(t, signup.body.refreshToken));
    noStore(await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: { accessToken: signup.body.accessToken, appId: t.app.id }, body: {} }));
    await t.backend.admin.createDeveloper({ email: "dev-ns@example.com", password: "developer passphrase" });
    noStore(await t.request("POST", "/api/v1/developer/login", { body: { email: "dev-ns@example.com", password: "developer passphrase" } }));

    const f = await familyBackend(2);
    const invite = await f.invite();
    noStore(await f.consume(invite.token, "member-ns@example.com"));
    const existing = await signupTenant(f.t);
    const second = await f.invite();
    noStore(await f.as(existing, "POST", "/api/v1/tenants/me/replace-with-family", { token: second.token }));
  });

  it("CORS never allows credentials (no cookies on the tenant API)", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example.com"] } });
    const res = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, headers: { origin: "https://app.example.com" }, body: { email: "c@example.com", password: "correct horse battery" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("PDFs download (attachment) on the API origin", async () => {
    const t = await startFilesBackend(DRIVERS[1]);
    const up = await t.upload({ filename: "doc.pdf", type: "application/pdf", data: sample("pdf") });
    const served = await t.fetchPublic(up.body.file.url);
    expect(served.headers.get("content-disposition")?.split(";")[0]).toBe("attachment");
  });

  it("sealed secrets: a 16-byte tag is required, and a value bound to one app does not open for another", () => {
    const box = createSecretBox(Buffer.alloc(32, 7));
    const sealed = box.seal("s3cret", "app_a");
    expect(box.open(sealed, "app_a")).toBe("s3cret");
    expect(() => box.open(sealed, "app_b")).toThrow(/cannot decrypt/);
    expect(() => box.open(sealed)).toThrow(/bound to a context/);
    // A truncated tag (4 bytes) is refused, never accepted as a shorter tag.
    const raw = Buffer.from(box.seal("x").slice("enc:v1:".length), "base64url");
    const short = "enc:v1:" + Buffer.concat([raw.subarray(0, 12 + 4)]).toString("base64url");
    expect(() => box.open(short)).toThrow();
    expect(box.open(box.seal("legacy"))).toBe("legacy");
  });
});
