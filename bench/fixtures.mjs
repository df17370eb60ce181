// What the scenarios need before a load, made once per run and shared: tenants, records,
// the seeded collections, uploaded files. Each fixture exists on both servers.
import { call, bearerHeaders, expectOk, multipart, opaqueBytes } from "./http.mjs";
import { createJiti } from "jiti";
import { BENCH_ORIGIN, COLLECTIONS, COLLECTION_SETTINGS, FILTERS, HALF_FILTERS, ORG_COLLECTION, PAGE, SEARCHES, SEARCH_MATCHES, SIZES, expectedMatches, recordData } from "./dataset.mjs";

// The API tests' software authenticator (real ES256 keys and signatures), not a copy of it.
const { softAuthenticator } = await createJiti(import.meta.url).import("../test/_passkey.ts");

export const PASSWORD = "correct horse battery staple";

/** A full-text search of one word, 20 records a page (newest first, or ranked). */
export const searchQuery = (word, ranked = false) =>
  `filter=${encodeURIComponent(JSON.stringify({ $text: { $search: word } }))}${ranked ? `&sort=${encodeURIComponent('{"$rank":-1}')}` : ""}&limit=20`;

export function logSeed(server, collection, seeded) {
  const steps = seeded.steps ? ` (${Object.entries(seeded.steps).map(([k, v]) => `${k.replace(/Ms$/, "")} ${(v / 1000).toFixed(1)} s`).join(", ")})` : "";
  console.log(`  seeded ${server} ${collection}: ${seeded.rows.toLocaleString("en-US")} rows in ${(seeded.ms / 1000).toFixed(1)} s${steps}`);
  for (const w of seeded.warnings ?? []) console.log(`  ${server} seed warning: ${w}`);
  return seeded;
}

/** `once(name, fn)`: fn's answer (a promise) made on the first call for `name`, the same one after. */
export function memo() {
  const made = new Map();
  return (name, fn) => {
    if (!made.has(name)) made.set(name, fn());
    return made.get(name);
  };
}

/** `side` and `rawSide` name the two sides in the seeding lines ("tenantd-pg" and "raw-pg" on PostgreSQL). */
export function createFixtures(td, raw, { side = "tenantd", rawSide = "raw" } = {}) {
  const runId = Date.now().toString(36);
  const once = memo();
  const key = td.app.publishableKey;
  const appId = td.app.id;

  async function tdSignup(label) {
    const email = `${label}-${runId}@bench.test`;
    const body = expectOk(await call(td.url, "POST", "/api/v1/auth/signup", { key, body: { email, password: PASSWORD } }), "tenantd signup", [201]);
    return { id: body.tenant.id, email, accessToken: body.accessToken, refreshToken: body.refreshToken, bearer: { accessToken: body.accessToken, appId }, issuedAt: Date.now() };
  }
  /**
   * Access tokens live 15 minutes, and a run (seeding a million rows on a busy machine, two
   * engines) can outlast that: a tenant whose token is older than 5 minutes gets a new one
   * (refreshed in place) before a scenario reads it.
   */
  async function fresh(t) {
    if (Date.now() - t.issuedAt < 5 * 60_000) return t;
    // One refresh at a time per tenant: presenting a refresh token twice would end the session.
    t.refreshing ??= (async () => {
      const body = expectOk(await call(td.url, "POST", "/api/v1/auth/refresh", { key, body: { refreshToken: t.refreshToken } }), "tenantd refresh (fixture token)", [200]);
      Object.assign(t, { accessToken: body.accessToken, refreshToken: body.refreshToken, bearer: { accessToken: body.accessToken, appId }, issuedAt: Date.now() });
    })().finally(() => {
      t.refreshing = undefined;
    });
    await t.refreshing;
    return t;
  }
  const freshSeeded = async (seeded) => {
    const r = await seeded;
    if (r.tenant) await fresh(r.tenant);
    for (const t of r.tenants ?? []) await fresh(t);
    return r;
  };
  async function rawSignup(label) {
    const email = `${label}-${runId}@bench.test`;
    const body = expectOk(await call(raw.url, "POST", "/signup", { body: { email, password: PASSWORD } }), "raw signup", [201]);
    return { id: body.id, email, sessionId: body.sessionId, refreshToken: body.refreshToken };
  }

  /** `n` records in the `benchitems` collection of the main tenant: their ids. */
  async function tdItems(n) {
    const t = await f.td.main();
    const ids = [];
    for (let i = 0; i < n; i++) {
      const res = await call(td.url, "POST", `/api/v1/data/${COLLECTIONS.items}`, { bearer: t.bearer, body: { data: recordData(i) } });
      ids.push(expectOk(res, "tenantd create record", [201]).record.id);
    }
    return ids;
  }
  async function rawItems(n) {
    const t = await f.raw.main();
    const ids = [];
    for (let i = 0; i < n; i++) {
      ids.push((await call(raw.url, "POST", `/records/${t.id}/${COLLECTIONS.items}`, { body: { data: recordData(i) } })).body.record.id);
    }
    return ids;
  }

  /** Checks through the API that both list filters count `expected` matches for `tenant`. */
  async function verifyTd(tenant, collection, expected, filters = FILTERS) {
    await fresh(tenant);
    for (const [kind, filter] of Object.entries(filters)) {
      const res = await call(td.url, "GET", `/api/v1/data/${collection}?filter=${encodeURIComponent(JSON.stringify(filter))}&limit=20`, { bearer: tenant.bearer });
      const body = expectOk(res, `tenantd list (${kind})`, [200]);
      if (body.total !== expected) throw new Error(`seeded ${collection} but the ${kind} filter counts ${body.total} records, expected ${expected}: the clone seeding does not match tenantd's schema`);
    }
    // Those lists asked tenantd for automatic indexes on the undeclared fields: the load
    // measures the steady state, after they are built (an older tenantd answers false).
    await td.call("records.settled", {});
  }

  /** Checks through the API that the full-text searches count their seeded matches. */
  async function verifySearch(tenant, collection, count) {
    await fresh(tenant);
    for (const [kind, word] of Object.entries(SEARCHES)) {
      const expected = typeof SEARCH_MATCHES[kind] === "function" ? SEARCH_MATCHES[kind](count) : SEARCH_MATCHES[kind];
      const res = await call(td.url, "GET", `/api/v1/data/${collection}?${searchQuery(word)}`, { bearer: tenant.bearer });
      const body = expectOk(res, `tenantd search (${kind})`, [200]);
      if (body.total !== expected) throw new Error(`seeded the words of ${collection} but a search of ${word} counts ${body.total} records, expected ${expected}: the search seeding does not match tenantd's schema`);
    }
  }

  /** One tenant with `count` records in `collection`, made through the API once and cloned in SQL. */
  async function tdSeeded(label, collection, count, rawSeed) {
    const t = await tdSignup(label);
    const res = await call(td.url, "POST", `/api/v1/data/${collection}`, { bearer: t.bearer, body: { data: recordData(0) } });
    const record = expectOk(res, "tenantd create record", [201]).record;
    rawSeed().catch(() => {}); // the endpoint exists: seed the baseline meanwhile (errors surface where it is awaited)
    const seeded = logSeed(side, collection, await td.call("seed.clone", { recordId: record.id, tenantId: t.id, count }));
    const language = COLLECTION_SETTINGS[collection]?.search?.language;
    if (language) {
      logSeed(side, `${collection} words`, await td.call("seed.search", { tenantId: t.id, collection, language }));
      await verifySearch(t, collection, count);
    }
    await verifyTd(t, collection, expectedMatches(count));
    if (collection === COLLECTIONS.big) await verifyTd(t, collection, count / 2, HALF_FILTERS);
    return { tenant: t, seeded };
  }
  async function rawSeeded(label, collection, count) {
    const t = await rawSignup(label);
    const seeded = logSeed(rawSide, collection, await raw.call("seed.records", { tenantId: t.id, collection, count }));
    if (COLLECTION_SETTINGS[collection]?.search) logSeed(rawSide, `${collection} words`, await raw.call("seed.search", { tenantId: t.id, collection }));
    return { tenant: t, seeded };
  }

  /** A tenant's new organization: its id. */
  async function tdOrg(t) {
    return expectOk(await call(td.url, "POST", "/api/v1/orgs", { bearer: t.bearer, body: { name: "bench" } }), "tenantd create organization", [201]).org.id;
  }

  /**
   * An organization with SIZES.big records in ORG_COLLECTION: one made through its route, the
   * rest cloned in SQL under its data owner id (the organization's id, src/orgs/records.ts).
   */
  async function tdOrgBig() {
    const t = await tdSignup("orgbig");
    const orgId = await tdOrg(t);
    const path = `/api/v1/orgs/${orgId}/collections/${ORG_COLLECTION}/records`;
    const record = expectOk(await call(td.url, "POST", path, { bearer: t.bearer, body: { data: recordData(0) } }), "tenantd create organization record", [201]).record;
    const seeded = logSeed(side, ORG_COLLECTION, await td.call("seed.clone", { recordId: record.id, tenantId: orgId, count: SIZES.big }));
    for (const [kind, filter] of Object.entries(HALF_FILTERS)) {
      const body = expectOk(await call(td.url, "GET", `${path}?filter=${encodeURIComponent(JSON.stringify(filter))}&limit=20`, { bearer: t.bearer }), `tenantd org list (${kind})`, [200]);
      if (body.total !== SIZES.big / 2) throw new Error(`seeded ${ORG_COLLECTION} but the ${kind} half filter counts ${body.total} records, expected ${SIZES.big / 2}`);
    }
    await td.call("records.settled", {});
    return { tenant: t, orgId, seeded };
  }

  /** An organization of SIZES.orgMembers members and the members cursor at its middle. */
  async function tdOrgMembers() {
    const t = await tdSignup("orgmembers");
    const orgId = await tdOrg(t);
    const seeded = logSeed(side, "org members", await td.call("seed.orgMembers", { appId, orgId, count: SIZES.orgMembers - 1 }));
    let middle;
    for (let seen = 0; seen < SIZES.orgMembers / 2; seen += 200) {
      const res = await call(td.url, "GET", `/api/v1/orgs/${orgId}/members?limit=200${middle ? `&after=${encodeURIComponent(middle)}` : ""}`, { bearer: t.bearer });
      middle = expectOk(res, "tenantd members page", [200]).next;
      if (!middle) throw new Error(`tenantd members: no next after ${seen + 200} members`);
    }
    return { tenant: t, orgId, middle, seeded };
  }

  /** A tenant with a passkey of a software authenticator; `device.get(options)` answers a sign-in's options. */
  async function tdPasskey() {
    const t = await tdSignup("passkey");
    const device = softAuthenticator(BENCH_ORIGIN);
    const options = expectOk(await call(td.url, "POST", "/api/v1/auth/passkeys/register/options", { bearer: t.bearer, body: {} }), "tenantd passkey options", [200]);
    expectOk(await call(td.url, "POST", "/api/v1/auth/passkeys/register", { bearer: t.bearer, body: { credential: device.create(options) } }), "tenantd passkey register", [201]);
    return { tenant: t, device };
  }

  async function tdUpload(bytes) {
    const t = await f.td.main();
    const { body, contentType } = multipart(bytes);
    const res = await call(td.url, "POST", "/api/v1/files/upload", { bearer: t.bearer, raw: body, headers: { "content-type": contentType } });
    return expectOk(res, "tenantd upload", [201]).file;
  }
  async function rawUpload(bytes) {
    const t = await f.raw.main();
    const { body, contentType } = multipart(bytes);
    return (await call(raw.url, "POST", `/files/${t.id}`, { raw: body, headers: { "content-type": contentType } })).body.file;
  }

  const f = {
    runId,
    tdUrl: td.url,
    rawUrl: raw.url,
    td: {
      key,
      appId,
      signup: tdSignup,
      main: async () => fresh(await once("td.main", () => tdSignup("main"))),
      headers: async () => bearerHeaders((await f.td.main()).bearer),
      /** A fresh session of the main tenant: a refresh-token chain of its own. */
      async login() {
        const t = await f.td.main();
        const body = expectOk(await call(td.url, "POST", "/api/v1/auth/login", { key, body: { email: t.email, password: PASSWORD } }), "tenantd login", [200]);
        return body;
      },
      items: () => once("td.items", () => tdItems(100)),
      passkey: () => once("td.passkey", tdPasskey),
      /** One tenant with 100,000 records in `bench100k` (made through the API once, cloned in SQL). */
      big: () => freshSeeded(once("td.big", () => tdSeeded("big", COLLECTIONS.big, SIZES.big, f.raw.big))),
      /** One tenant with 1,000,000 records in `bench1m`. */
      million: () => freshSeeded(once("td.million", () => tdSeeded("million", COLLECTIONS.million, SIZES.million, f.raw.million))),
      /** 10,000 tenants × 100 records in `benchspread`; the load uses the first 8, which are real accounts. */
      spread: () =>
        freshSeeded(once("td.spread", async () => {
          const tenants = [];
          for (let i = 0; i < 8; i++) tenants.push(await tdSignup(`spread${i}`));
          const res = await call(td.url, "POST", `/api/v1/data/${COLLECTIONS.spread}`, { bearer: tenants[0].bearer, body: { data: recordData(0) } });
          const record = expectOk(res, "tenantd create record", [201]).record;
          f.raw.spread().catch(() => {});
          const seeded = logSeed(side, COLLECTIONS.spread, await td.call("seed.clone", {
            recordId: record.id,
            tenantId: tenants[0].id,
            spread: { realTenantIds: tenants.map((t) => t.id), tenants: SIZES.spreadTenants, perTenant: SIZES.perTenant },
          }));
          await verifyTd(tenants[0], COLLECTIONS.spread, expectedMatches(SIZES.perTenant));
          await verifyTd(tenants[7], COLLECTIONS.spread, expectedMatches(SIZES.perTenant));
          return { tenants, seeded };
        })),
      /** The cursor (`next`) that starts page PAGE.deep of the 100,000-record list, PAGE.size records a page, walked to once. */
      deepCursor: () =>
        once("td.deepCursor", async () => {
          const { tenant } = await f.td.big();
          let next;
          for (let page = 1; page < PAGE.deep; page++) {
            const res = await call(td.url, "GET", `/api/v1/data/${COLLECTIONS.big}?limit=${PAGE.size}${next ? `&after=${encodeURIComponent(next)}` : ""}`, { bearer: tenant.bearer });
            next = expectOk(res, "tenantd list page", [200]).next;
            if (!next) throw new Error(`tenantd list: no next after page ${page} of ${COLLECTIONS.big}`);
          }
          return next;
        }),
      upload: (bytes) => tdUpload(bytes),
      /** A 100 KB file for the public read scenario. */
      smallFile: () => once("td.smallFile", () => tdUpload(opaqueBytes(100 * 1024))),
      /** Issue 43: an organization with 100,000 records in ORG_COLLECTION, its owner signed in. */
      orgBig: () => freshSeeded(once("td.orgBig", tdOrgBig)),
      /** Issue 43: an organization of 10,000 members, its owner signed in, and the cursor at its middle. */
      orgMembers: () => freshSeeded(once("td.orgMembers", tdOrgMembers)),
    },
    raw: {
      signup: rawSignup,
      main: () => once("raw.main", () => rawSignup("main")),
      async login() {
        const t = await f.raw.main();
        return (await call(raw.url, "POST", "/login", { body: { email: t.email, password: PASSWORD } })).body;
      },
      items: () => once("raw.items", () => rawItems(100)),
      big: () => once("raw.big", () => rawSeeded("big", COLLECTIONS.big, SIZES.big)),
      million: () => once("raw.million", () => rawSeeded("million", COLLECTIONS.million, SIZES.million)),
      spread: () =>
        once("raw.spread", async () => {
          const tenants = [];
          for (let i = 0; i < 8; i++) tenants.push(await rawSignup(`spread${i}`));
          const seeded = logSeed(rawSide, COLLECTIONS.spread, await raw.call("seed.spread", { realTenantIds: tenants.map((t) => t.id), collection: COLLECTIONS.spread }));
          return { tenants, seeded };
        }),
      /** The raw baseline's cursor of the same page. */
      deepCursor: () =>
        once("raw.deepCursor", async () => {
          const { tenant } = await f.raw.big();
          let next;
          for (let page = 1; page < PAGE.deep; page++) {
            next = (await call(raw.url, "GET", `/page/${tenant.id}/${COLLECTIONS.big}?limit=${PAGE.size}${next ? `&after=${encodeURIComponent(next)}` : ""}`)).body.next;
            if (!next) throw new Error(`raw list: no next after page ${page}`);
          }
          return next;
        }),
      upload: (bytes) => rawUpload(bytes),
      smallFile: () => once("raw.smallFile", () => rawUpload(opaqueBytes(100 * 1024))),
    },
  };
  return f;
}

