// Parse Server as a peer on the bench's PostgreSQL (issue 40; `run.mjs --peers parse`):
// which rows it takes part in, its fixtures (a user, records it owns) and its requests.
// Parse is installed apart (bench/peers/parse, its own package.json), never as a dependency
// of tenantd; without it the peer is skipped with a message.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { COLLECTIONS, FILTERS, HALF_FILTERS, SIZES, recordData } from "./dataset.mjs";
import { PASSWORD, logSeed, memo } from "./fixtures.mjs";
import { call, expectOk } from "./http.mjs";

export const PARSE_DIR = fileURLToPath(new URL("./peers/parse", import.meta.url));
export const PARSE_SERVER = "./peers/parse/parse-server.mjs";
export const parseInstalled = () => existsSync(`${PARSE_DIR}/node_modules/parse-server/package.json`);
export const parseVersion = () => JSON.parse(readFileSync(`${PARSE_DIR}/node_modules/parse-server/package.json`, "utf8")).version;
export const PARSE_MISSING = "Parse Server is not installed, the parse peer is skipped (install it with `npm ci --prefix bench/peers/parse`)";

// Issue 40: the indexed 50 % list at least 5 × Parse (both with `total`), and Parse's create
// rate the floor of tenantd-pg's. The other rows have Parse's figure beside them, no target.
const TARGETS = { "list-half-indexed-100k": 5, create: 1 };
const LISTS = {
  "list-indexed-100k": FILTERS.indexed,
  "list-unindexed-100k": FILTERS.unindexed,
  "list-half-indexed-100k": HALF_FILTERS.indexed,
  "list-half-unindexed-100k": HALF_FILTERS.unindexed,
};
// The index a Parse developer adds for each declared field's list (owner, field, createdAt);
// the undeclared fields get none, as Parse builds none on its own.
const INDEXED = ["status", "state"];

/** The scenario names Parse takes part in. */
export const PARSE_ROWS = new Set(["create", ...Object.keys(LISTS)]);

export function parseTarget(name) {
  const min = TARGETS[name];
  return min === undefined ? undefined : { kind: "ratio", min, text: `≥ ${min} × parse` };
}

/** The user and records on the Parse server `child`, made once. */
export function createParseFixtures(child) {
  const headers = { "x-parse-application-id": child.app.id };
  const once = memo();
  const runId = Date.now().toString(36);
  async function signup(label) {
    const body = expectOk(await call(child.url, "POST", "/parse/users", { headers, body: { username: `${label}-${runId}@bench.test`, password: PASSWORD } }), "parse signup", [201]);
    return { id: body.objectId, headers: { ...headers, "x-parse-session-token": body.sessionToken } };
  }
  /** A record as a Parse app makes one: its fields, the owning user, and an ACL for that user alone. */
  const record = (user, i) => ({ ...recordData(i), owner: user.id, ACL: { [user.id]: { read: true, write: true } } });
  return {
    record,
    main: () => once("main", () => signup("main")),
    big: () =>
      once("big", async () => {
        const user = await signup("big");
        expectOk(await call(child.url, "POST", `/parse/classes/${COLLECTIONS.big}`, { headers: user.headers, body: record(user, 0) }), "parse create", [201]);
        logSeed("parse", COLLECTIONS.big, await child.call("seed.records", { className: COLLECTIONS.big, owner: user.id, count: SIZES.big, indexed: INDEXED }));
        return user;
      }),
  };
}

/** The Parse side of scenario `name` (`{ requests }`, as scenarios.mjs's sides), or undefined. */
export async function parseSide(name, pf) {
  if (name === "create") {
    const user = await pf.main();
    const body = JSON.stringify(pf.record(user, 1));
    return { requests: () => [{ method: "POST", path: `/parse/classes/${COLLECTIONS.items}`, headers: { ...user.headers, "content-type": "application/json" }, body }] };
  }
  const filter = LISTS[name];
  if (!filter) return undefined;
  const user = await pf.big();
  const where = encodeURIComponent(JSON.stringify({ owner: user.id, ...filter }));
  // `count=1`: Parse answers the total beside the page, as tenantd's list does.
  return { requests: () => [{ method: "GET", path: `/parse/classes/${COLLECTIONS.big}?where=${where}&order=-createdAt&limit=20&count=1`, headers: user.headers }] };
}
