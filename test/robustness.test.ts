import { describe, expect, it } from "vitest";
import { buildRequest, developerSession, signupTenant, startBackend, toReply, type ReqOptions, type Reply } from "./_helpers.ts";

// Values of the wrong type, size or shape for any field an endpoint might take.
const BAD_VALUES: unknown[] = [null, true, -1, 1e308, 2.5, "", "x".repeat(5000), "\u0000\u202e<script>", [], [1, "a"], {}, { $where: "1" }, { a: { b: { c: {} } } }];
const FIELDS = [
  "email", "password", "token", "refreshToken", "data", "planId", "url", "name", "settings", "include", "by", "period",
  "expiresInSeconds", "note", "member_tenant_id", "successUrl", "cancelUrl", "returnUrl", "currency", "locale",
  "inviteToken", "sendEmail", "entitlements", "priceCents", "slug", "interval", "days", "expiresAt",
];
const BAD_BODIES: string[] = [
  "[]", "null", "42", '"text"', "{", '{"a":1}{', `{"data":${'{"d":'.repeat(5000)}1${"}".repeat(5000)}}`,
  ...FIELDS.flatMap((field) => BAD_VALUES.map((value) => JSON.stringify({ [field]: value }))),
];
const BAD_QUERIES = ["", "?limit=-1&offset=abc", "?filter=%7B&sort=1", '?filter={"a":{"$regex":"x"}}', "?period=weekly", "?email=%00&limit=1e9", "?filter=" + encodeURIComponent(JSON.stringify({ a: { $in: Array(500).fill(1) } }))];
const PARAM_VALUES = ["x", "%00", "..%2F..%2Fetc", "a".repeat(300)];

describe("robustness: no input makes any route answer 500", () => {
  it("every route, with bad bodies, queries and path values, answers below 500 with { error, message } for every error", async () => {
    const t = await startBackend({ logger: "silent" });
    const tenant = await signupTenant(t);
    const developer = await developerSession(t);
    // Routes that end the caller's session, app or key go last, so the others are reached
    // with valid credentials and their handlers really see the bad input.
    const destructive = /\/(logout|delete|rotate-key)$|^\/api\/v1\/admin\/apps\/:appId$/;
    const routes = (t.backend as unknown as { "~routes": { route?: string; method?: string }[] })["~routes"]
      .filter((r) => r.route && r.route !== "/**" && r.method && r.method !== "HEAD")
      .sort((a, b) => Number(destructive.test(a.route!) && a.method !== "GET") - Number(destructive.test(b.route!) && b.method !== "GET"));
    expect(routes.length).toBeGreaterThan(60);
    const statuses = new Map<number, number>();

    const failures: string[] = [];
    const check = (what: string, res: Reply) => {
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) failures.push(`${what} → ${res.status} ${res.text.slice(0, 120)}`);
      else if (res.status >= 400 && res.headers.get("content-type")?.includes("json") && (typeof res.body?.error !== "string" || typeof res.body?.message !== "string")) {
        failures.push(`${what} → ${res.status} without { error, message }: ${res.text.slice(0, 120)}`);
      }
    };
    const credentials = [
      { key: t.app.publishableKey, bearer: tenant.bearer },
      { key: t.app.publishableKey, developer },
    ];
    // A realtime stream (text/event-stream) answers with its status and stays open: its
    // status is what counts here, so its body is cancelled instead of read to an end that never comes.
    const send = async (method: string, path: string, opts: ReqOptions): Promise<Reply> => {
      const res = await t.backend.fetch(buildRequest("http://localhost", method, path, opts));
      if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return toReply(res);
      await res.body?.cancel();
      return { status: res.status, headers: res.headers, body: undefined, text: "" };
    };
    /** Every request for one route, one after another. */
    const probe = async (r: (typeof routes)[number]) => {
      for (const param of PARAM_VALUES) {
        const path = r.route!.replace(/:appId/g, t.app.id).replace(/:[A-Za-z]+/g, param);
        for (const auth of credentials) {
          for (const query of r.method === "GET" ? BAD_QUERIES : [""]) {
            const what = `${r.method} ${path}${query}`;
            check(what, await send(r.method!, path + query, { ...auth }));
          }
          if (r.method === "GET" || param !== "x") continue;
          for (const body of BAD_BODIES) {
            check(`${r.method} ${path} ${body.slice(0, 60)}`, await send(r.method!, path, { ...auth, raw: body, headers: { "content-type": "application/json" } }));
          }
        }
      }
    };
    // The routes that leave credentials intact are probed a few at a time: on PostgreSQL each
    // request waits on the network, and one route's requests at a time left both cores idle.
    // The destructive ones follow, one by one, in the order above.
    const safe = routes.filter((r) => !(destructive.test(r.route!) && r.method !== "GET"));
    const lanes = Array.from({ length: 4 }, (_, lane) => safe.filter((_, i) => i % 4 === lane));
    await Promise.all(lanes.map(async (lane) => {
      for (const r of lane) await probe(r);
    }));
    for (const r of routes.slice(safe.length)) await probe(r);
    expect(failures).toEqual([]);
    // The bad input reached validation, not only the credential checks.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(5000);
    // Tens of thousands of requests; on PostgreSQL each reads its session and app over the
    // network (no in-process cache there): about twice SQLite's time.
  }, 480_000);
});
