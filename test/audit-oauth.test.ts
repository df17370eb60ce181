// Social sign-ins in the audit trail (docs/audit.md): the method names the provider, and the
// entry carries the callback request's client, as a password sign-in's does.
import { describe, expect, it } from "vitest";
import { authorize, begin, fragmentOf, oauthBackend, useFakeOAuth } from "./oauth-helpers.ts";

const fake = useFakeOAuth();

describe("audit trail: social sign-in", () => {
  it("records tenant.signed_in with method oauth:<provider> and the browser's user agent", async () => {
    const t = await oauthBackend(fake);
    const started = await begin(t, "github");
    const back = await authorize(fake, "github", started.location, { id: "4242", email: "social@example.com" });
    const reply = await t.request("GET", back.path, { headers: { cookie: started.cookie!, "user-agent": "SocialBrowser/3", "x-request-id": "req-oauth-1" } });
    const tenantId = JSON.parse(Buffer.from(fragmentOf(reply).get("service_access_token")!.split(".")[1]!, "base64url").toString()).sub as string;
    const { entries } = await t.backend.admin.listAudit(t.app.id, { action: "tenant.signed_in" });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ tenantId, actor: { type: "tenant", id: tenantId }, client: "SocialBrowser/3", requestId: "req-oauth-1", details: { method: "oauth:github" } });
  });
});
