// Server-side hooks (docs/hooks.md): record, auth and billing hooks, custom routes under
// /api/v1/x/ and cron schedules, given in code or named by the config file (loaded with jiti).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createTenantBackend, cron, defineHooks, refuse, type ServerHooks } from "../src/index.ts";
import { loadConfig } from "../src/config-file.ts";
import { parseSchedule } from "../src/server-hooks/cron.ts";
import { afterThisTest, developerSession, expectError, signupTenant, startBackend, tempDir, TEST_ARGON2 } from "./_helpers.ts";
import { testStoreConfig } from "./_postgres.ts";
import { billingBackend, form, pathOf } from "./billing-fixtures.ts";
import type { Logger } from "../src/log.ts";

/** A logger that keeps its lines, to see what a failing hook wrote. */
function memoryLogger() {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields });
  const logger: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { logger, lines };
}

describe("record hooks", () => {
  it("a before hook changes the data or refuses with its own message; after hooks see the stored record", async () => {
    const seen: string[] = [];
    const hooks = defineHooks({
      records: {
        beforeCreate: ({ collection, data }) => {
          if (data.banned) throw refuse("Banned words are not allowed here.", "invalid_request");
          return { ...data, stamped: collection };
        },
        afterCreate: ({ record, tenantId }) => void seen.push(`created ${record.id} by ${tenantId} stamped=${String(record.data.stamped)}`),
        beforeUpdate: ({ patch }) => ({ ...patch, edited: true }),
        afterUpdate: ({ record }) => void seen.push(`updated ${record.id}`),
        beforeDelete: async ({ id }) => {
          if (id === "rec_keep") throw refuse("This record is kept.");
        },
        afterDelete: ({ id }) => void seen.push(`deleted ${id}`),
      },
    });
    const t = await startBackend({ hooks });
    const tenant = await signupTenant(t);
    const created = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { text: "hi" } } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.record.data).toEqual({ text: "hi", stamped: "notes" });
    const refused = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { banned: true } } });
    expectError(refused, 400, "invalid_request");
    expect(refused.body.message).toBe("Banned words are not allowed here.");

    const id = created.body.record.id as string;
    const updated = await t.request("PUT", `/api/v1/data/notes/${id}`, { bearer: tenant.bearer, body: { data: { text: "bye" } } });
    expect(updated.body.record.data).toEqual({ text: "bye", stamped: "notes", edited: true });
    expectError(await t.request("DELETE", "/api/v1/data/notes/rec_keep", { bearer: tenant.bearer }), 403, "forbidden");
    expect((await t.request("DELETE", `/api/v1/data/notes/${id}`, { bearer: tenant.bearer })).status).toBe(204);
    expect(seen).toEqual([`created ${id} by ${tenant.id} stamped=notes`, `updated ${id}`, `deleted ${id}`]);
  });

  it("an upsert goes through the create hook, so a refusal cannot be bypassed", async () => {
    const hooks = defineHooks({ records: { beforeCreate: ({ data }) => (data.banned ? Promise.reject(refuse("No.")) : undefined) } });
    const t = await startBackend({ hooks });
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { notes: { unique: ["slug"] } } } });
    const tenant = await signupTenant(t);
    expectError(await t.request("POST", "/api/v1/data/notes/upsert", { bearer: tenant.bearer, body: { data: { slug: "a", banned: true } } }), 403, "forbidden");
    expect((await t.request("POST", "/api/v1/data/notes/upsert", { bearer: tenant.bearer, body: { data: { slug: "a" } } })).status).toBe(201);
  });

  it("a batch and a write with an Idempotency-Key go through the hooks of their single calls, and a replay runs none again", async () => {
    const seen: string[] = [];
    const hooks = defineHooks({
      records: {
        beforeCreate: ({ data }) => {
          if (data.banned) throw refuse("Banned words are not allowed here.", "invalid_request");
          return { ...data, stamped: true };
        },
        afterCreate: ({ record }) => void seen.push(`created ${String(record.data.text ?? record.data.slug)}`),
        beforeUpdate: ({ patch }) => ({ ...patch, edited: true }),
        afterUpdate: ({ record }) => void seen.push(`updated ${String(record.data.text ?? record.data.slug)}`),
        beforeDelete: ({ id }) => {
          if (id === "rec_keep") throw refuse("This record is kept.");
        },
        afterDelete: ({ id }) => void seen.push(`deleted ${id}`),
      },
    });
    const t = await startBackend({ hooks });
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { tags: { unique: ["slug"] } } } });
    const tenant = await signupTenant(t);
    const batch = (operations: unknown[], key?: string) =>
      t.request("POST", "/api/v1/batch", { bearer: tenant.bearer, body: { operations }, ...(key === undefined ? {} : { headers: { "idempotency-key": key } }) });
    const old = (await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { text: "old" } } })).body.record.id as string;
    seen.length = 0;

    const res = await batch([
      { op: "create", collection: "notes", data: { text: "new" } },
      { op: "upsert", collection: "tags", data: { slug: "s", n: 1 } },
      { op: "upsert", collection: "tags", data: { slug: "s", n: 2 } },
      { op: "update", collection: "notes", id: old, data: { text: "older" } },
      { op: "delete", collection: "notes", id: old },
      { op: "increment", featureKey: "exports" },
    ]);
    expect(res.status, res.text).toBe(200);
    const results = res.body.results as { record?: { data: unknown } }[];
    expect(results.slice(0, 4).map((r) => r.record!.data)).toEqual([
      { text: "new", stamped: true },
      { slug: "s", n: 1, stamped: true },
      { slug: "s", n: 2, stamped: true },
      { text: "older", stamped: true, edited: true },
    ]);
    expect(seen).toEqual(["created new", "created s", "updated s", "updated older", `deleted ${old}`]);

    // A refusal is the operation's failure: nothing written, no after hook.
    seen.length = 0;
    const refused = await batch([
      { op: "create", collection: "notes", data: { text: "fine" } },
      { op: "create", collection: "notes", data: { banned: true } },
    ]);
    expectError(refused, 400, "invalid_request");
    expect(refused.body.message).toBe("operations[1] (create notes) failed, so nothing of the batch was written: Banned words are not allowed here.");
    expectError(await batch([{ op: "delete", collection: "notes", id: "rec_keep" }]), 403, "forbidden");
    expect(seen).toEqual([]);
    expect((await t.request("GET", "/api/v1/data/notes", { bearer: tenant.bearer })).body.total).toBe(1);

    // The first request with a key runs the hooks; its retries get the kept answer and run none.
    const send = () => t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { text: "once" } }, headers: { "idempotency-key": "hook-key" } });
    const first = await send();
    expect([first.status, first.body.record.data]).toEqual([201, { text: "once", stamped: true }]);
    const again = await send();
    expect([again.headers.get("idempotent-replayed"), again.body]).toEqual(["true", first.body]);
    const ops = [{ op: "create", collection: "notes", data: { text: "batched" } }];
    expect((await batch(ops, "hook-batch")).status).toBe(200);
    expect((await batch(ops, "hook-batch")).headers.get("idempotent-replayed")).toBe("true");
    expect(seen).toEqual(["created once", "created batched"]);
  });

  it("a failing hook answers 500 hook_failed naming it, logged with the request id; a slow one is cut at the timeout", async () => {
    const { logger, lines } = memoryLogger();
    const hooks = defineHooks({
      timeoutMs: 100,
      records: {
        beforeCreate: ({ data }) => {
          if (data.slow) return new Promise(() => undefined);
          if (data.odd) return "not an object" as never;
          throw new Error("the operator's bug");
        },
      },
    });
    const t = await startBackend({ hooks, logger });
    const tenant = await signupTenant(t);
    const failed = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, headers: { "x-request-id": "req-hook-1" }, body: { data: { a: 1 } } });
    expectError(failed, 500, "hook_failed");
    expect(failed.body.message).toBe("The server hook records.beforeCreate threw an error; the server's log has the details.");
    const line = lines.find((l) => l.msg === "server hook failed")!;
    expect(line.fields).toMatchObject({ requestId: "req-hook-1", path: "/api/v1/data/notes" });
    expect(JSON.stringify(line.fields)).toContain("the operator's bug");

    const started = Date.now();
    const slow = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { slow: true } } });
    expectError(slow, 500, "hook_failed");
    expect(slow.body.message).toBe("The server hook records.beforeCreate did not finish within 100 ms; the server's log has the details.");
    expect(Date.now() - started).toBeLessThan(3000);
    expectError(await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { odd: true } } }), 500, "hook_failed");
    // The server goes on serving.
    expect((await t.request("GET", "/api/v1/data/notes", { bearer: tenant.bearer })).status).toBe(200);
  });
});

describe("auth and billing hooks", () => {
  it("after signup, login and delete; subscription changes from the billing provider", async () => {
    const events: string[] = [];
    const hooks = defineHooks({
      auth: {
        afterSignup: ({ email, method }) => void events.push(`signup ${email} ${method}`),
        afterLogin: ({ method }) => void events.push(`login ${method}`),
        afterDelete: ({ email, reason }) => void events.push(`delete ${email} ${reason}`),
      },
      billing: { subscriptionChanged: ({ status, provider }) => void events.push(`subscription ${status} ${provider}`) },
    });
    const b = await billingBackend({ hooks });
    const pro = await b.plan({ name: "Pro", slug: "pro" });
    const tenant = await b.tenant({ email: "hooked@example.com" });
    const login = await b.t.request("POST", "/api/v1/auth/login", { key: b.t.app.publishableKey, body: { email: "hooked@example.com", password: "correct horse battery" } });
    expect(login.status).toBe(200);
    const checkout = await b.tenantPost(tenant, "/checkout", { planId: pro.id, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" });
    expect(checkout.status, checkout.text).toBe(200);
    expect((await b.t.request("POST", pathOf(checkout.body.url), form({ action: "confirm" }))).status).toBe(303);
    expect((await b.t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer })).status).toBe(200);
    expect(events).toEqual(["signup hooked@example.com password", "login password", "subscription active dev", "delete hooked@example.com self_delete"]);
  });
});

describe("custom routes", () => {
  it("serve under /api/v1/x/ with the tenant signed in: JSON, a Response, or 204", async () => {
    const hooks: ServerHooks = {
      routes: {
        "GET /hello/:name": ({ params, query, tenantId, app }) => ({ hello: params.name, tenantId, appId: app.id, loud: query.loud === "1" }),
        "POST /echo": ({ body }) => ({ echoed: body }),
        "GET /csv": () => new Response("a,b\n1,2\n", { headers: { "content-type": "text/csv" } }),
        "DELETE /nothing": () => undefined,
      },
    };
    const t = await startBackend({ hooks });
    const tenant = await signupTenant(t);
    const hello = await t.request("GET", "/api/v1/x/hello/w%C3%B6rld?loud=1", { bearer: tenant.bearer });
    expect(hello.status, hello.text).toBe(200);
    expect(hello.body).toEqual({ hello: "wörld", tenantId: tenant.id, appId: t.app.id, loud: true });
    expect((await t.request("POST", "/api/v1/x/echo", { bearer: tenant.bearer, body: { a: [1, 2] } })).body).toEqual({ echoed: { a: [1, 2] } });
    expectError(await t.request("POST", "/api/v1/x/echo", { bearer: tenant.bearer, raw: "{nope", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    const csv = await t.request("GET", "/api/v1/x/csv", { bearer: tenant.bearer });
    expect([csv.status, csv.headers.get("content-type"), csv.text]).toEqual([200, "text/csv", "a,b\n1,2\n"]);
    expect((await t.request("DELETE", "/api/v1/x/nothing", { bearer: tenant.bearer })).status).toBe(204);
    expectError(await t.request("GET", "/api/v1/x/hello/you"), 401, "unauthorized");
    expectError(await t.request("GET", "/api/v1/x/unknown", { bearer: tenant.bearer }), 404, "not_found");
  });
});

describe("custom routes and impersonation", () => {
  it("a developer's read-only session reaches GET routes only, and the handler is told who impersonates", async () => {
    const seen: unknown[] = [];
    const hooks: ServerHooks = {
      routes: {
        "GET /who": ({ impersonatedBy }) => ({ impersonatedBy: impersonatedBy ?? null }),
        "POST /charge": () => void seen.push("charged"),
      },
    };
    const t = await startBackend({ hooks });
    const tenant = await signupTenant(t);
    const developer = await developerSession(t);
    const me = (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.id;
    const opened = await t.request("POST", `/api/v1/admin/apps/${t.app.id}/tenants/${tenant.id}/impersonate`, { developer });
    const bearer = { accessToken: opened.body.accessToken as string, appId: t.app.id };
    expect((await t.request("GET", "/api/v1/x/who", { bearer })).body).toEqual({ impersonatedBy: me });
    expect((await t.request("GET", "/api/v1/x/who", { bearer: tenant.bearer })).body).toEqual({ impersonatedBy: null });
    expectError(await t.request("POST", "/api/v1/x/charge", { bearer, body: {} }), 403, "impersonation_read_only");
    expect(seen).toEqual([]);
  });
});

describe("the hooks module", () => {
  it("is named by the config file, relative to it, and loaded with jiti (TypeScript)", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "server"));
    writeFileSync(
      join(dir, "server", "tenantd.hooks.ts"),
      `interface Ctx { params: Record<string, string> }
export default { routes: { "GET /typed/:n": ({ params }: Ctx): { doubled: number } => ({ doubled: Number(params.n) * 2 }) } };
`,
    );
    writeFileSync(join(dir, "tenantd.config.json"), JSON.stringify({ hooks: "./server/tenantd.hooks.ts" }));
    const { config } = await loadConfig({}, {}, dir);
    expect(config.hooks).toBe(join(dir, "server", "tenantd.hooks.ts"));
    const store = await testStoreConfig(dir);
    const backend = await createTenantBackend({ ...config, dataDir: dir, logger: "silent", argon2: TEST_ARGON2, rateLimit: false, ...store.config });
    afterThisTest(async () => {
      await backend.close();
      await store.drop?.();
    });
    const app = backend.defaultApp!;
    const signup = await backend.fetch(new Request("http://localhost/api/v1/auth/signup", { method: "POST", headers: { "x-service-key": app.publishableKey, "content-type": "application/json" }, body: JSON.stringify({ email: "ts@example.com", password: "correct horse battery" }) }));
    const { accessToken } = (await signup.json()) as { accessToken: string };
    const res = await backend.fetch(new Request("http://localhost/api/v1/x/typed/21", { headers: { authorization: `Bearer ${accessToken}`, "x-service-app": app.id } }));
    expect(await res.json()).toEqual({ doubled: 42 });
  });

  it("refuses to start on a mistake, naming it", async () => {
    await expect(startBackend({ hooks: { routes: { "FETCH /x": () => 1 } } })).rejects.toThrow('route "FETCH /x" must read "<METHOD> /path"');
    await expect(startBackend({ hooks: { cron: [cron("tick", "every now and then", () => undefined)] } })).rejects.toThrow('cron job "tick"');
    await expect(startBackend({ hooks: { cron: [cron("a", "every 1m", () => 1), cron("a", "every 2m", () => 1)] } })).rejects.toThrow('two cron jobs are named "a"');
    await expect(startBackend({ hooks: join(tempDir(), "missing.hooks.ts") })).rejects.toThrow("cannot load the hooks module");
  });
});

describe("cron schedules", () => {
  it("reads intervals aligned to the epoch and five-field expressions in UTC", () => {
    const at = Date.UTC(2026, 0, 15, 12, 0, 0, 400);
    expect(parseSchedule("every 1s").next(at)).toBe(Date.UTC(2026, 0, 15, 12, 0, 1));
    expect(parseSchedule("@every 5m").next(at)).toBe(Date.UTC(2026, 0, 15, 12, 5));
    expect(parseSchedule("0 3 * * *").next(at)).toBe(Date.UTC(2026, 0, 16, 3, 0));
    expect(parseSchedule("*/15 * * * *").next(at)).toBe(Date.UTC(2026, 0, 15, 12, 15));
    // Thursday 15 January 2026: the next Monday 09:30.
    expect(parseSchedule("30 9 * * 1").next(at)).toBe(Date.UTC(2026, 0, 19, 9, 30));
    expect(parseSchedule("0 0 1 1-3 *").next(at)).toBe(Date.UTC(2026, 1, 1, 0, 0));
    expect(parseSchedule("0 0 31 2 *").next(at)).toBe(Number.POSITIVE_INFINITY);
    for (const bad of ["every 500ms", "61 * * * *", "* * *", "every day"]) expect(() => parseSchedule(bad), bad).toThrow();
  });
});
