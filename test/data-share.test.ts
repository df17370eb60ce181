import { describe, expect, it } from "vitest";
import { expectError, serveHttp } from "./_helpers.ts";
import { dataBackend } from "./data-helpers.ts";
import { storeRows } from "./_store.ts";

describe("share links", () => {
  it("shares a record publicly until the link expires (410), by the injected clock", async () => {
    const { t, api } = await dataBackend();
    const { body } = await api.create("notes", { text: "hello" });
    const res = await api.share("notes", body.record.id, { expiresInSeconds: 60 });
    expect(res.status).toBe(201);
    const share = res.body.shareToken;
    const now = t.clock();
    expect(share).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^[\w-]{32,}$/),
      expiresAt: new Date(now + 60_000).toISOString(),
      createdAt: new Date(now).toISOString(),
    });
    // Only the hash is stored.
    const stored = await storeRows(t.backend).column<string>("SELECT token_hash FROM share_links");
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toContain(share.token);

    const read = await api.shared(share.token);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ record: body.record });

    t.clock.advance(59_999);
    expect((await api.shared(share.token)).status).toBe(200);
    t.clock.advance(1);
    expectError(await api.shared(share.token), 410, "gone");
  });

  it("serves the current record, with CORS open to any origin, over real HTTP", async () => {
    const { t, api } = await dataBackend();
    const { body } = await api.create("notes", { text: "v1" });
    const share = (await api.share("notes", body.record.id)).body.shareToken;
    expect(share.expiresAt).toBeNull();
    await api.update("notes", body.record.id, { text: "v2" });
    t.clock.advance(10 * 365 * 24 * 3600 * 1000);
    const { url } = await serveHttp(t.backend);
    const res = await fetch(`${url}/api/v1/public/shared/${share.token}`, { headers: { origin: "https://elsewhere.example" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(((await res.json()) as { record: { data: unknown } }).record.data).toEqual({ text: "v2" });
  });

  it("allows several links per record and revokes them all at once", async () => {
    const { api } = await dataBackend();
    const [a, b] = await api.seed("notes", [{ n: 1 }, { n: 2 }]);
    const links = [await api.share("notes", a!), await api.share("notes", a!, { expiresInSeconds: 3600 }), await api.share("notes", a!)];
    const other = await api.share("notes", b!);
    expect(new Set(links.map((l) => l.body.shareToken.token)).size).toBe(3);

    const revoked = await api.revoke("notes", a!);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ revoked: 3 });
    for (const l of links) expectError(await api.shared(l.body.shareToken.token), 404, "not_found");
    expect((await api.shared(other.body.shareToken.token)).status).toBe(200);
    expect((await api.revoke("notes", a!)).body).toEqual({ revoked: 0 });
  });

  it("reads as 404 once the record is deleted", async () => {
    const { api } = await dataBackend();
    const [id] = await api.seed("notes", [{ n: 1 }]);
    const share = (await api.share("notes", id!, { expiresInSeconds: 60 })).body.shareToken;
    await api.remove("notes", id!);
    expectError(await api.shared(share.token), 404, "not_found");
  });

  const badBodies: [string, unknown][] = [
    ["zero seconds", { expiresInSeconds: 0 }],
    ["negative seconds", { expiresInSeconds: -5 }],
    ["fractional seconds", { expiresInSeconds: 1.5 }],
    ["seconds as a string", { expiresInSeconds: "60" }],
    ["null seconds", { expiresInSeconds: null }],
    ["more than 365 days", { expiresInSeconds: 365 * 24 * 3600 + 1 }],
  ];
  it.each(badBodies)("refuses %s", async (_name, body) => {
    const { api } = await dataBackend();
    const [id] = await api.seed("notes", [{ n: 1 }]);
    const res = await api.share("notes", id!, body);
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toContain("expiresInSeconds");
  });

  it("accepts exactly 365 days and answers 404 for unknown records and tokens", async () => {
    const { api } = await dataBackend();
    const [id] = await api.seed("notes", [{ n: 1 }]);
    expect((await api.share("notes", id!, { expiresInSeconds: 365 * 24 * 3600 })).status).toBe(201);
    expectError(await api.share("notes", "rec_missing"), 404, "not_found");
    expectError(await api.revoke("notes", "rec_missing"), 404, "not_found");
    expectError(await api.share("other", id!), 404, "not_found");
    expectError(await api.shared("not-a-token"), 404, "not_found");
    expectError(await api.shared("x".repeat(500)), 404, "not_found");
  });
});
