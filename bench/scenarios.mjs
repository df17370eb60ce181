// Every scenario: what tenantd gets, what the raw baseline gets for the same SQL work, and
// the target from issue 10. `tenantd`/`raw` return `{ requests }` (a factory, called once
// per load so per-connection state such as refresh-token chains starts fresh).
import { BATCH_SIZE, COLLECTIONS, FILTERS, HALF_FILTERS, ORG_COLLECTION, PAGE, SEARCHES, recordData } from "./dataset.mjs";
import { PASSWORD, searchQuery } from "./fixtures.mjs";
import { call, expectOk, multipart, opaqueBytes } from "./http.mjs";

const json = (body) => JSON.stringify(body);
const JSON_HEADERS = { "content-type": "application/json" };
const MB = 1_000_000;

/** Cycles through `items` across all connections. */
function cycle(items) {
  let i = 0;
  return () => items[i++ % items.length];
}

const ratio = (min) => ({ kind: "ratio", min, text: `≥ ${min} × raw` });

// One counter for the whole run: warm-up and measured loads never reuse an email.
let signups = 0;
function signupRequests(f, side, path, extraHeaders) {
  return [
    {
      method: "POST",
      path,
      headers: { ...JSON_HEADERS, ...extraHeaders },
      setupRequest: (req) => ({ ...req, body: json({ email: `load${++signups}-${f.runId}-${side}@bench.test`, password: PASSWORD }) }),
    },
  ];
}

/**
 * Refresh-token chains. autocannon resets a connection's context after every request of a
 * one-request list, so the chains live in a shared queue instead: a request takes a token no
 * other request holds, and its answer puts the next token of that session back. Every token
 * is presented exactly once, as a client refreshing its own session would.
 */
function refreshRequests(pool, path, extraHeaders) {
  return [
    {
      method: "POST",
      path,
      headers: { ...JSON_HEADERS, ...extraHeaders },
      setupRequest: (req) => ({ ...req, body: json({ refreshToken: pool.shift() ?? "rt_pool_ran_dry" }) }),
      onResponse: (status, body) => {
        if (status === 200) pool.push(JSON.parse(body).refreshToken);
      },
    },
  ];
}

async function loginPool(login, n) {
  const pool = [];
  for (let i = 0; i < n; i++) pool.push((await login()).refreshToken);
  return pool;
}

const tdLogin = async (f) => {
  const t = await f.td.main();
  return [{ method: "POST", path: "/api/v1/auth/login", headers: { ...JSON_HEADERS, "x-service-key": f.td.key }, body: json({ email: t.email, password: PASSWORD }) }];
};
const rawLogin = async (f) => {
  const t = await f.raw.main();
  return [{ method: "POST", path: "/login", headers: JSON_HEADERS, body: json({ email: t.email, password: PASSWORD }) }];
};
/**
 * A passkey sign-in as a browser makes it: the options (a fresh challenge), then the
 * assertion signed by the software authenticator. Counter 0, as synced passkeys send: the
 * connections sign at once, so a counting authenticator's numbers would reach the server out
 * of order.
 */
const tdPasskeySignIn = async (f) => {
  const { device } = await f.td.passkey();
  const headers = { ...JSON_HEADERS, "x-service-key": f.td.key };
  return [
    { method: "POST", path: "/api/v1/auth/passkeys/options", headers, body: "{}", onResponse: (status, body, context) => (context.options = status === 200 ? JSON.parse(body) : undefined) },
    {
      method: "POST",
      path: "/api/v1/auth/passkeys/sign-in",
      headers,
      setupRequest: (req, context) => ({ ...req, body: json({ credential: context.options ? device.get(context.options, { counter: 0 }) : {} }) }),
    },
  ];
};
const tdMe = async (f) => [{ method: "GET", path: "/api/v1/auth/me", headers: await f.td.headers() }];
const rawMe = async (f) => [{ method: "GET", path: `/tenants/${(await f.raw.main()).id}` }];

const listQuery = (filter) => `filter=${encodeURIComponent(json(filter))}&limit=20`;
const rawListQuery = (filter) => {
  const [[field, value]] = Object.entries(filter);
  return `field=${field}&value=${value}&limit=20`;
};

const LIST_SETS = [
  { dataset: "big", suffix: "100k", title: "1 tenant × 100,000 records", filters: FILTERS,
    targets: { indexed: { kind: "p50", maxMs: 5, text: "p50 ≤ 5 ms, index used" }, unindexed: { kind: "p50", maxMs: 20, text: "p50 ≤ 20 ms" } } },
  { dataset: "big", suffix: "100k", prefix: "half-", title: "1 tenant × 100,000 records, half match", filters: HALF_FILTERS,
    targets: { indexed: ratio(0.85), unindexed: ratio(0.85) } },
  { dataset: "spread", suffix: "10k-tenants", title: "10,000 tenants × 100 records", filters: FILTERS, targets: { indexed: ratio(0.85), unindexed: ratio(0.85) } },
  { dataset: "million", suffix: "1m", title: "1 tenant × 1,000,000 records", filters: FILTERS,
    targets: { indexed: { kind: "p50", maxMs: 50, text: "p50 ≤ 50 ms" }, unindexed: { kind: "p50", maxMs: 50, text: "p50 ≤ 50 ms" } } },
];

function listScenarios() {
  const out = [];
  for (const set of LIST_SETS) {
    const { dataset } = set;
    for (const kind of ["indexed", "unindexed"]) {
      const filter = set.filters[kind];
      const collection = COLLECTIONS[dataset];
      const single = dataset !== "spread";
      out.push({
        name: `list-${set.prefix ?? ""}${kind}-${set.suffix}`,
        title: `list, filter on ${kind === "indexed" ? "a declared" : "an undeclared"} field, ${set.title}`,
        target: set.targets[kind],
        explain: dataset === "big" && kind === "indexed" && !set.prefix ? { collection, filter } : undefined,
        async tenantd(f) {
          if (single) {
            const { tenant } = await f.td[dataset]();
            return { requests: () => [{ method: "GET", path: `/api/v1/data/${collection}?${listQuery(filter)}`, headers: { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": f.td.appId } }] };
          }
          const { tenants } = await f.td.spread();
          return {
            requests: () => {
              const next = cycle(tenants);
              return [
                {
                  method: "GET",
                  path: `/api/v1/data/${collection}?${listQuery(filter)}`,
                  setupRequest: (req) => ({ ...req, headers: { authorization: `Bearer ${next().accessToken}`, "x-service-app": f.td.appId } }),
                },
              ];
            },
          };
        },
        async raw(f) {
          if (single) {
            const { tenant } = await f.raw[dataset]();
            return { requests: () => [{ method: "GET", path: `/records/${tenant.id}/${collection}?${rawListQuery(filter)}` }] };
          }
          const { tenants } = await f.raw.spread();
          return {
            requests: () => {
              const next = cycle(tenants);
              return [
                {
                  method: "GET",
                  setupRequest: (req) => ({ ...req, path: `/records/${next().id}/${collection}?${rawListQuery(filter)}` }),
                },
              ];
            },
          };
        },
      });
    }
  }
  return out;
}

const tenantHeaders = (f, tenant) => ({ authorization: `Bearer ${tenant.accessToken}`, "x-service-app": f.td.appId });

/** Issue 44: a full-text search of one word in the million-record collection, 20 records a page. */
function searchScenario(name, kind, { ranked = false, title, target }) {
  const word = SEARCHES[kind];
  return {
    name,
    title,
    target,
    async tenantd(f) {
      const { tenant } = await f.td.million();
      return { requests: () => [{ method: "GET", path: `/api/v1/data/${COLLECTIONS.million}?${searchQuery(word, ranked)}`, headers: tenantHeaders(f, tenant) }] };
    },
    async raw(f) {
      const { tenant } = await f.raw.million();
      return { requests: () => [{ method: "GET", path: `/search/${tenant.id}/${COLLECTIONS.million}?q=${word}${ranked ? "&rank=1" : ""}` }] };
    },
  };
}

/** Issue 44: page 1 of the 100,000-record list, or page PAGE.deep by cursor, PAGE.size records a page. */
function pageScenario(name, deep, { title, target }) {
  return {
    name,
    title,
    target,
    async tenantd(f) {
      const { tenant } = await f.td.big();
      const after = deep ? `&after=${encodeURIComponent(await f.td.deepCursor())}` : "";
      return { requests: () => [{ method: "GET", path: `/api/v1/data/${COLLECTIONS.big}?limit=${PAGE.size}${after}`, headers: tenantHeaders(f, tenant) }] };
    },
    async raw(f) {
      const { tenant } = await f.raw.big();
      const after = deep ? `&after=${encodeURIComponent(await f.raw.deepCursor())}` : "";
      return { requests: () => [{ method: "GET", path: `/page/${tenant.id}/${COLLECTIONS.big}?limit=${PAGE.size}${after}` }] };
    },
  };
}

/**
 * Issue 44's rows, each judged against another row of the run (`of`, measured before it):
 * `latency`, the mean latency ratio (the other row's req/s over this one's, same connections:
 * Little's law; autocannon's whole-millisecond p50 is too coarse for a ratio of pages near
 * 1 ms); `records`, this row's records/s (req/s × perRequest) over the other row's.
 */
const relative = (of, measure, bound, text, perRequest = 1) => ({ kind: "relative", of, measure, ...bound, perRequest, text });

const ISSUE_44 = [
  searchScenario("search-rare-1m", "rare", {
    title: `full-text search of one record's word, 1 tenant × 1,000,000 records (words indexed), 20 newest`,
    target: { kind: "p50", maxMs: 10, pgMaxMs: 20, text: "p50 ≤ 10 ms (PostgreSQL ≤ 20 ms)" },
  }),
  searchScenario("search-common-1m", "common", { title: "full-text search of a word in 1 % of 1,000,000 records (10,000 matches), 20 newest" }),
  searchScenario("search-ranked-1m", "common", { ranked: true, title: 'the same search ranked (sort {"$rank":-1}: every match scored)' }),
  pageScenario("list-page1-100k", false, { title: `list page 1 (${PAGE.size} records, no filter), 1 tenant × 100,000 records` }),
  pageScenario("list-cursor-deep-100k", true, {
    title: `list page ${PAGE.deep.toLocaleString("en-US")} by cursor (after=), the same list`,
    target: relative("list-page1-100k", "latency", { max: 1.5 }, "≤ 1.5 × page 1 latency"),
  }),
];

/**
 * Issue 43's rows, their baseline another request of tenantd itself: an organization's list
 * against the same list of a tenant's records (same data, same filter), and a members page by
 * cursor in the middle of a 10,000-member organization against its first page.
 */
const ISSUE_43 = [
  {
    name: "org-list-half",
    title: "list, half-match filter on a declared field, 1 organization × 100,000 records (/api/v1/orgs/{orgId}/collections/…); raw columns: the same list of a tenant's records (list-half-indexed-100k)",
    target: { kind: "ratio", min: 0.83, text: "≥ 0.83 × the tenant list (≤ 1.2 × its cost)" },
    baselineOnTenantd: true,
    async tenantd(f) {
      const { tenant, orgId } = await f.td.orgBig();
      return { requests: () => [{ method: "GET", path: `/api/v1/orgs/${orgId}/collections/${ORG_COLLECTION}/records?${listQuery(HALF_FILTERS.indexed)}`, headers: tenantHeaders(f, tenant) }] };
    },
    async raw(f) {
      const { tenant } = await f.td.big();
      return { requests: () => [{ method: "GET", path: `/api/v1/data/${COLLECTIONS.big}?${listQuery(HALF_FILTERS.indexed)}`, headers: tenantHeaders(f, tenant) }] };
    },
  },
  {
    name: "org-members-10k",
    title: "members page of 50 by cursor (after= at member 5,000), 1 organization × 10,000 members; raw columns: its first page",
    target: { kind: "p50", maxMs: 10, text: "p50 ≤ 10 ms" },
    baselineOnTenantd: true,
    async tenantd(f) {
      const { tenant, orgId, middle } = await f.td.orgMembers();
      return { requests: () => [{ method: "GET", path: `/api/v1/orgs/${orgId}/members?limit=50&after=${encodeURIComponent(middle)}`, headers: tenantHeaders(f, tenant) }] };
    },
    async raw(f) {
      const { tenant, orgId } = await f.td.orgMembers();
      return { requests: () => [{ method: "GET", path: `/api/v1/orgs/${orgId}/members?limit=50`, headers: tenantHeaders(f, tenant) }] };
    },
  },
];

function uploadScenario(name, bytes, { connections, amount, target }) {
  return {
    name,
    title: `file upload ${bytes / MB} MB, ${connections} at once`,
    connections,
    amount,
    warmupAmount: connections,
    target,
    async tenantd(f) {
      // Probe with a small file, so a missing endpoint is found before building the big body.
      await f.td.upload(opaqueBytes(1024));
      const headers = await f.td.headers();
      const { body, contentType } = multipart(opaqueBytes(bytes));
      return { requests: () => [{ method: "POST", path: "/api/v1/files/upload", headers: { ...headers, "content-type": contentType }, body }] };
    },
    async raw(f) {
      const t = await f.raw.main();
      const { body, contentType } = multipart(opaqueBytes(bytes));
      return { requests: () => [{ method: "POST", path: `/files/${t.id}`, headers: { "content-type": contentType }, body }] };
    },
  };
}

export const SCENARIOS = [
  {
    name: "argon2-bound",
    title: "argon2id hashes/s at the configured cost, 8 in flight (no HTTP)",
    custom: "argon2",
  },
  {
    name: "signup",
    title: "POST /auth/signup (argon2 hash + insert)",
    tenantd: async (f) => ({ requests: () => signupRequests(f, "td", "/api/v1/auth/signup", { "x-service-key": f.td.key }) }),
    raw: async (f) => ({ requests: () => signupRequests(f, "raw", "/signup", {}) }),
  },
  {
    name: "login",
    title: "POST /auth/login (argon2 verify + session insert)",
    target: { kind: "argon2", min: 0.85, text: "≥ 0.85 × argon2 bound" },
    tenantd: async (f) => ({ requests: () => tdLogin(f) }),
    raw: async (f) => ({ requests: () => rawLogin(f) }),
  },
  {
    // Issue 42: a passkey sign-in verifies one ES256 signature where a password login runs
    // argon2id, so it should be much cheaper. Both run on tenantd, the same server.
    name: "passkey-sign-in",
    title: "passkey sign-in (POST /auth/passkeys/options + /auth/passkeys/sign-in, software ES256 credential) against password login (raw columns: tenantd's POST /auth/login)",
    target: { kind: "ratio", min: 5, text: "≥ 5 × password login" },
    baselineOnTenantd: true,
    // Two requests make one sign-in: the ratio compares sign-ins.
    requestsPerOperation: 2,
    tenantd: async (f) => ({ requests: () => tdPasskeySignIn(f) }),
    raw: async (f) => ({ requests: () => tdLogin(f) }),
  },
  {
    name: "refresh",
    title: "POST /auth/refresh (rotate, chained per connection)",
    // Issue 20's write paths: usage-increment, upsert and refresh at least 0.85 × raw.
    target: ratio(0.85),
    tenantd: async (f, { connections }) => ({
      requests: async () => refreshRequests(await loginPool(f.td.login, connections), "/api/v1/auth/refresh", { "x-service-key": f.td.key }),
    }),
    raw: async (f, { connections }) => ({ requests: async () => refreshRequests(await loginPool(f.raw.login, connections), "/refresh", {}) }),
  },
  {
    name: "me",
    title: "GET /auth/me (bearer guard + tenant by id)",
    target: ratio(0.85),
    tenantd: async (f) => ({ requests: () => tdMe(f) }),
    raw: async (f) => ({ requests: () => rawMe(f) }),
  },
  {
    name: "introspect",
    title: "POST /auth/introspect (key + bearer)",
    target: ratio(0.85),
    async tenantd(f) {
      const headers = { ...JSON_HEADERS, ...(await f.td.headers()), "x-service-key": f.td.key };
      expectOk(await call(f.tdUrl, "POST", "/api/v1/auth/introspect", { headers, raw: "{}" }), "tenantd introspect", [200]);
      return { requests: () => [{ method: "POST", path: "/api/v1/auth/introspect", headers, body: "{}" }] };
    },
    raw: async (f) => ({ requests: async () => [{ method: "POST", path: `/introspect/${(await f.raw.main()).sessionId}`, headers: JSON_HEADERS, body: "{}" }] }),
  },
  {
    name: "create",
    title: "POST /data/:collection (insert JSON record)",
    target: ratio(0.9),
    async tenantd(f) {
      await f.td.items();
      const headers = { ...JSON_HEADERS, ...(await f.td.headers()) };
      return { requests: () => [{ method: "POST", path: `/api/v1/data/${COLLECTIONS.items}`, headers, body: json({ data: recordData(1) }) }] };
    },
    raw: async (f) => ({ requests: async () => [{ method: "POST", path: `/records/${(await f.raw.main()).id}/${COLLECTIONS.items}`, headers: JSON_HEADERS, body: json({ data: recordData(1) }) }] }),
  },
  {
    name: "get",
    title: "GET /data/:collection/:id (record by id)",
    target: ratio(0.85),
    async tenantd(f) {
      const ids = await f.td.items();
      const headers = await f.td.headers();
      return { requests: () => { const next = cycle(ids); return [{ method: "GET", headers, setupRequest: (req) => ({ ...req, path: `/api/v1/data/${COLLECTIONS.items}/${next()}` }) }]; } };
    },
    async raw(f) {
      const ids = await f.raw.items();
      return { requests: () => { const next = cycle(ids); return [{ method: "GET", setupRequest: (req) => ({ ...req, path: `/records/${next()}` }) }]; } };
    },
  },
  // The noise floor: the baseline against a second copy of itself (A/A), taking turns as
  // tenantd and raw do. No target: the ratio an identical server reaches in this run.
  ...["introspect", "get"].map((base) => ({
    name: `control-${base}`,
    title: `${base} on a second raw baseline against the first (identical code: the run's noise floor, no target)`,
    control: base,
  })),
  {
    name: "update",
    title: "PUT /data/:collection/:id (merge-patch)",
    target: ratio(0.9),
    async tenantd(f) {
      const ids = await f.td.items();
      const headers = { ...JSON_HEADERS, ...(await f.td.headers()) };
      return { requests: () => { const next = cycle(ids); return [{ method: "PUT", headers, body: json({ data: { n: 1, note: "patched" } }), setupRequest: (req) => ({ ...req, path: `/api/v1/data/${COLLECTIONS.items}/${next()}` }) }]; } };
    },
    async raw(f) {
      const ids = await f.raw.items();
      return { requests: () => { const next = cycle(ids); return [{ method: "PUT", headers: JSON_HEADERS, body: json({ data: { n: 1, note: "patched" } }), setupRequest: (req) => ({ ...req, path: `/records/${next()}` }) }]; } };
    },
  },
  {
    name: "batch-100-creates",
    title: `POST /batch of ${BATCH_SIZE} creates (one transaction)`,
    target: relative("create", "records", { min: 5 }, "≥ 5 × create's records/s", BATCH_SIZE),
    async tenantd(f) {
      const operations = Array.from({ length: BATCH_SIZE }, (_, i) => ({ op: "create", collection: COLLECTIONS.items, data: recordData(i) }));
      const t = await f.td.main();
      expectOk(await call(f.tdUrl, "POST", "/api/v1/batch", { bearer: t.bearer, body: { operations: operations.slice(0, 1) } }), "tenantd batch", [200]);
      const headers = { ...JSON_HEADERS, ...(await f.td.headers()) };
      return { requests: () => [{ method: "POST", path: "/api/v1/batch", headers, body: json({ operations }) }] };
    },
    async raw(f) {
      const rows = Array.from({ length: BATCH_SIZE }, (_, i) => recordData(i));
      return { requests: async () => [{ method: "POST", path: `/records/${(await f.raw.main()).id}/${COLLECTIONS.items}/batch`, headers: JSON_HEADERS, body: json({ rows }) }] };
    },
  },
  ...listScenarios(),
  ...ISSUE_44,
  ...ISSUE_43,
  {
    name: "upsert",
    title: "POST /data/:collection/upsert (unique field, 1,000 keys)",
    target: ratio(0.85),
    async tenantd(f) {
      const t = await f.td.main();
      expectOk(await call(f.tdUrl, "POST", `/api/v1/data/${COLLECTIONS.upsert}/upsert`, { bearer: t.bearer, body: { data: { key: "k0", n: 0 } } }), "tenantd upsert");
      const headers = { ...JSON_HEADERS, ...(await f.td.headers()) };
      return { requests: () => [{ method: "POST", path: `/api/v1/data/${COLLECTIONS.upsert}/upsert`, headers, setupRequest: (req) => ({ ...req, body: json({ data: { key: `k${(Math.random() * 1000) | 0}`, n: 1 } }) }) }] };
    },
    raw: async (f) => {
      const t = await f.raw.main();
      return { requests: () => [{ method: "POST", path: `/records/${t.id}/${COLLECTIONS.upsert}/upsert`, headers: JSON_HEADERS, setupRequest: (req) => ({ ...req, body: json({ data: { key: `k${(Math.random() * 1000) | 0}`, n: 1 } }) }) }] };
    },
  },
  {
    name: "usage-increment",
    title: "POST /billing/usage/:feature/increment",
    target: ratio(0.85),
    async tenantd(f) {
      const t = await f.td.main();
      expectOk(await call(f.tdUrl, "POST", "/api/v1/billing/usage/benchcalls/increment", { bearer: t.bearer, body: {} }), "tenantd usage increment", [200]);
      const headers = { ...JSON_HEADERS, ...(await f.td.headers()) };
      return { requests: () => [{ method: "POST", path: "/api/v1/billing/usage/benchcalls/increment", headers, body: "{}" }] };
    },
    raw: async (f) => ({ requests: async () => [{ method: "POST", path: `/usage/${(await f.raw.main()).id}/benchcalls/increment`, headers: JSON_HEADERS, body: "{}" }] }),
  },
  // 8 at once: one tenant may have 8 uploads in flight (src/files/upload-slots.ts), a 9th is 429.
  uploadScenario("upload-1mb", 1 * MB, { connections: 8, amount: 300 }),
  uploadScenario("upload-10mb-x8", 10 * MB, { connections: 8, amount: 64, target: { kind: "rssGrowth", maxMb: 50, text: "RSS growth < 50 MB" } }),
  {
    name: "file-read",
    title: "GET public file URL (100 KB file, no auth)",
    async tenantd(f) {
      const file = await f.td.smallFile();
      const url = new URL(file.url);
      return { requests: () => [{ method: "GET", path: url.pathname + url.search }] };
    },
    async raw(f) {
      const file = await f.raw.smallFile();
      return { requests: () => [{ method: "GET", path: `/files/${file.id}` }] };
    },
  },
  {
    name: "login-storm-lag",
    title: "event-loop lag while 64 logins run at once (+ GET /auth/me on 2 connections)",
    custom: "storm",
    target: { kind: "loopP99", maxMs: 20, text: "loop delay p99 ≤ 20 ms" },
    storm: { tenantd: { login: tdLogin, me: tdMe }, raw: { login: rawLogin, me: rawMe } },
  },
];
