// Realtime subscriptions to an organization collection (docs/organizations.md#organization-records):
// `org` in the subscription, a member with records.read; removal ends the events at once.
import { describe, expect, it } from "vitest";
import { expectError, serveHttp, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { openSse, type SseEvent } from "./_sse.ts";

const recordEvents = (e: SseEvent) => ["created", "updated", "deleted", "left"].includes(e.event);

function member(t: TestBackend, url: string, who: TestTenant) {
  const headers = { authorization: `Bearer ${who.accessToken}`, "x-service-app": who.bearer.appId };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, { method, headers: { ...headers, ...(body !== undefined && { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  };
  return {
    who,
    call,
    async stream() {
      const sse = await openSse(`${url}/api/v1/realtime`, headers);
      return { sse, id: (await sse.next((e) => e.event === "ready")).data.stream as string };
    },
    subscribe: (stream: string, spec: Record<string, unknown>) => call("POST", "/api/v1/realtime/subscriptions", { stream, ...spec }),
    orgCreate: async (orgId: string, collection: string, data: unknown) => (await call("POST", `/api/v1/orgs/${orgId}/collections/${collection}/records`, { data })).body.record,
    create: async (collection: string, data: unknown) => (await call("POST", `/api/v1/data/${collection}`, { data })).body.record,
    async org(name: string) {
      return (await call("POST", "/api/v1/orgs", { name })).body.org.id as string;
    },
    async join(orgId: string, by: { call: typeof call }, role = "member") {
      const invite = await by.call("POST", `/api/v1/orgs/${orgId}/invites`, { role });
      expect((await call("POST", "/api/v1/orgs/invites/accept", { token: invite.body.invite.token })).status).toBe(200);
    },
  };
}

describe("realtime: organization collections", () => {
  it("a member hears the organization's changes; no other organization's; removal ends them at once", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, {
      settings: { collections: { tasks: { org: true }, notes: {} }, orgs: { roles: { blind: { permissions: ["records.write"] } } } },
    });
    const { url } = await serveHttp(t.backend);
    const [alice, bob, mallory, carol] = await Promise.all([1, 2, 3, 4].map(async () => member(t, url, await signupTenant(t))));
    const orgA = await alice!.org("A");
    const orgB = await mallory!.org("B");
    await bob!.join(orgA, alice!);
    await carol!.join(orgA, alice!, "blind");

    const { sse, id: stream } = await bob!.stream();
    const sub = await bob!.subscribe(stream, { collection: "tasks", org: orgA });
    expect(sub.status, sub.text).toBe(201);
    const subId = sub.body.subscription.id as string;
    const own = (await bob!.subscribe(stream, { collection: "notes" })).body.subscription.id as string;

    // Refusals: the tenant's own subscription on an org collection, an org route on a tenant
    // collection, an organization one is not in (or of no one), a role without records.read.
    expectError(await bob!.subscribe(stream, { collection: "tasks" }) as never, 400, "invalid_request");
    expectError(await bob!.subscribe(stream, { collection: "notes", org: orgA }) as never, 400, "invalid_request");
    expectError(await bob!.subscribe(stream, { collection: "tasks", org: orgB }) as never, 404, "not_found");
    expectError(await bob!.subscribe(stream, { collection: "tasks", org: "org_nope" }) as never, 404, "not_found");
    const blind = await carol!.stream();
    const refused = await carol!.subscribe(blind.id, { collection: "tasks", org: orgA });
    expectError(refused as never, 403, "forbidden");
    expect(refused.body.message).toContain("records.read");

    // Mallory's organization B writes first: bob hears only A's record.
    await mallory!.orgCreate(orgB, "tasks", { secret: true });
    const a1 = await alice!.orgCreate(orgA, "tasks", { title: "plan" });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "created", data: { collection: "tasks", id: a1.id, subscriptions: [subId], record: { data: { title: "plan" } } } });

    // Bob is removed: his organization subscription ends before the removal is answered.
    expect((await alice!.call("DELETE", `/api/v1/orgs/${orgA}/members/${bob!.who.id}`)).status).toBe(204);
    expect(await sse.next((e) => e.event === "unsubscribed")).toMatchObject({ data: { subscriptions: [subId], reason: "org_access_ended" } });
    await alice!.orgCreate(orgA, "tasks", { title: "after bob" });
    // His own records still come; the organization's record written before them never does.
    const mine = await bob!.create("notes", { n: 1 });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "created", data: { collection: "notes", id: mine.id, subscriptions: [own] } });
    expect(sse.events.filter(recordEvents).map((e) => e.data.id)).toEqual([a1.id, mine.id]);
    expectError(await bob!.subscribe(stream, { collection: "tasks", org: orgA }) as never, 404, "not_found");
  });
});
