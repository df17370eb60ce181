import { describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { Validator } from "@seriousme/openapi-schema-validator";
import { registeredRoutes } from "../src/http/router.ts";
import { OPERATIONS } from "../src/openapi/operations.ts";
import { toOpenApiPath } from "../src/openapi/document.ts";
import { startBackend } from "./_helpers.ts";
import { runEveryEndpoint, type Exchange } from "./_every-endpoint.ts";

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };

/** The documented path template and method an exchange ran, preferring literal segments. */
function templateOf(doc: Doc, e: Exchange): string | undefined {
  const path = new URL(e.path, "http://x").pathname;
  const matches = Object.keys(doc.paths).filter((p) => {
    const re = new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    return re.test(path) && doc.paths[p]![e.method.toLowerCase()];
  });
  return matches.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))[0];
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

describe("OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)", async () => {
    const t = await startBackend();
    const res = await t.request("GET", "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.servers).toEqual([{ url: "http://localhost:3000" }]);
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // The tenant and organization events, the audit entry and the developer's test event are described for receivers.
    expect(Object.keys(res.body.webhooks).sort()).toEqual([
      "audit.entry", "org.created", "org.deleted", "org.invite.created", "org.invite.revoked", "org.member.added", "org.member.removed", "org.member.role_changed",
      "org.ownership_transferred", "org.subscription.updated", "org.updated", "tenant.deleted", "tenant.email.resend_verification", "tenant.security", "webhook.test",
    ]);
  });

  it("documents every route the router registers, and nothing else", async () => {
    const t = await startBackend();
    const registered = registeredRoutes(t.backend).map((r) => `${r.method} ${r.path}`).sort();
    const documented = OPERATIONS.map((o) => `${o.method} ${o.path}`).sort();
    expect(registered.length).toBeGreaterThan(80);
    expect(documented).toEqual(registered);
    const doc = (await t.request("GET", "/api/v1/openapi.json")).body as Doc;
    const inDoc = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    expect(inDoc).toEqual(registered.map((r) => r.replace(/^(\S+) (.*)$/, (_, m: string, p: string) => `${m} ${toOpenApiPath(p)}`)).sort());
  });

  it("describes every real response: status documented, JSON body valid against its schema", async () => {
    const { exchanges, t } = await runEveryEndpoint();
    const doc = (await t.request("GET", "/api/v1/openapi.json")).body as Doc;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: "tenantd" });

    const problems: string[] = [];
    const covered = new Set<string>();
    for (const e of exchanges) {
      if (e.path === "/api/v1/nothing-here" || (e.method === "PUT" && e.path === "/api/v1/auth/me")) continue; // the router's own 404/405, checked below
      const template = templateOf(doc, e);
      if (!template) {
        problems.push(`${e.method} ${e.path}: no documented operation`);
        continue;
      }
      const op = doc.paths[template]![e.method.toLowerCase()]!;
      const response = op.responses[String(e.status)];
      if (!response) {
        problems.push(`${e.method} ${template}: status ${e.status} not documented (${e.text.slice(0, 120)})`);
        continue;
      }
      if (e.status < 400) covered.add(`${e.method} ${template}`);
      const json = response.content?.["application/json"];
      if (!json) {
        if (e.contentType?.includes("application/json")) problems.push(`${e.method} ${template} ${e.status}: JSON body where none is documented`);
        continue;
      }
      expect(e.contentType, `${e.method} ${e.path}`).toMatch(/^application\/json/);
      const validate = ajv.getSchema(`tenantd#/${pointer("paths", template, e.method.toLowerCase(), "responses", String(e.status), "content", "application/json", "schema")}`)!;
      if (!validate(e.body)) problems.push(`${e.method} ${template} ${e.status}: ${ajv.errorsText(validate.errors)} in ${e.text.slice(0, 300)}`);
    }
    expect(problems).toEqual([]);
    // Every documented operation answered with a documented 2xx or redirect at least once.
    const all = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(all.filter((o) => !covered.has(o))).toEqual([]);
  });

  it("the router's own fallbacks answer in the documented error shape", async () => {
    const t = await startBackend();
    const doc = (await t.request("GET", "/api/v1/openapi.json")).body as { components: { schemas: Record<string, unknown> } };
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(doc.components.schemas.ErrorBody as object);
    for (const [method, path, status] of [["GET", "/api/v1/nothing-here", 404], ["PUT", "/api/v1/auth/me", 405]] as const) {
      const res = await t.request(method, path);
      expect(res.status).toBe(status);
      expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
    }
  });
});
