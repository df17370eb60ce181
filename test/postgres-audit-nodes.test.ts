// Three nodes (three cores, each with its own pool) on one PostgreSQL database append to
// one app's audit trail at once: the head row's lock keeps a single chain, no seq twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { createCore, type Core } from "../src/core.ts";
import { ensureDefaultApp } from "../src/bootstrap.ts";
import { audit } from "../src/audit/audit.ts";
import { verifyChain } from "../src/audit/verify.ts";
import { createTestDatabase } from "./_postgres.ts";
import { tempDir, testClock } from "./_helpers.ts";

const clock = testClock();
const secretKey = randomBytes(32).toString("hex");
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let nodes: Core[];

beforeAll(async () => {
  db = await createTestDatabase();
  nodes = [0, 1, 2].map(() => createCore({ database: { url: db.url, pool: { max: 4 } }, secretKey, dataDir: tempDir(), clock, logger: "error" }));
  await Promise.all(nodes.map((n) => n.ready));
});
afterAll(async () => {
  await Promise.all((nodes ?? []).map((n) => n.close()));
  await db?.drop();
});

describe("audit trail across nodes", () => {
  it("appends from three nodes at once into one unbroken chain per app", async () => {
    await ensureDefaultApp(nodes[0]!);
    const app = (await nodes[0]!.db.apps.list())[0]!;
    const writes = nodes.flatMap((node, n) => Array.from({ length: 30 }, (_, i) => audit(node, { appId: app.id, action: "test.node", details: { n, i } })));
    const entries = await Promise.all(writes);
    expect(entries.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 90 }, (_, i) => i + 1));
    for (const node of nodes) expect(await verifyChain(node, app.id)).toMatchObject({ ok: true, entries: 90 });
  });

  it("entries that arrive together commit together, and one the database refuses fails only its own caller", async () => {
    const app = (await nodes[0]!.db.apps.list())[0]!;
    // PostgreSQL's text cannot hold NUL: the sixth entry is refused, in whichever batch it lands.
    const writes = Array.from({ length: 12 }, (_, i) => audit(nodes[0]!, { appId: app.id, action: "test.batch", target: i === 5 ? "bad\u0000target" : `t${i}` }));
    const results = await Promise.allSettled(writes);
    expect(results.map((r) => r.status)).toEqual(results.map((_, i) => (i === 5 ? "rejected" : "fulfilled")));
    const seqs = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.seq] : []));
    expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 11 }, (_, i) => 91 + i));
    expect(await verifyChain(nodes[1]!, app.id)).toMatchObject({ ok: true, entries: 101 });
  });
});
