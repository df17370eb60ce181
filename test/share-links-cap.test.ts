import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend } from "./_helpers.ts";
import { MAX_SHARE_LINKS } from "../src/data/share.ts";

/** Issue 39, item 4 (d): share links per record are bounded; expired and revoked ones make room. */
describe("share links per record", () => {
  it(`a record takes at most ${MAX_SHARE_LINKS} live links; expired ones and a revoke make room`, async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const made = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { text: "shared" } } });
    const path = `/api/v1/data/notes/${made.body.record.id}/share`;
    const share = (body: unknown = {}) => t.request("POST", path, { bearer: tenant.bearer, body });
    // Ten that expire in a minute, the rest without expiry.
    for (let i = 0; i < MAX_SHARE_LINKS; i++) expect((await share(i < 10 ? { expiresInSeconds: 60 } : {})).status).toBe(201);
    const refused = await share();
    expectError(refused, 402, "limit_reached");
    expect(refused.body.message).toContain(`DELETE ${path}`);
    // Once the ten have expired, ten more fit.
    t.clock.advance(61_000);
    for (let i = 0; i < 10; i++) expect((await share()).status).toBe(201);
    expectError(await share(), 402, "limit_reached");
    // Revoking them all starts over.
    expect((await t.request("DELETE", path, { bearer: tenant.bearer })).body).toEqual({ revoked: MAX_SHARE_LINKS });
    expect((await share()).status).toBe(201);
  });
});
