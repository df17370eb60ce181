// clone-seed.mjs for PostgreSQL: the parent makes one record through the API, this finds its
// row and copies it with new ids, tenants, data and times in one `INSERT … SELECT` over
// `generate_series`, so PostgreSQL builds the rows itself (1,000,000 rows without a round
// trip each). Like the SQLite seeder it does not know tenantd's schema in advance: it finds
// the tenant, data and time columns from the template row, copies every other column as is,
// and leaves identity and generated columns (seq, the jsonb `doc`) to PostgreSQL. The parent
// then checks through the API that the list filters count the seeded rows.
import postgres from "postgres";
import { recordData, searchWordsSql, seedTime } from "./dataset.mjs";
import { searchDocument, tsvectorLiteral } from "../dist/data/text.js";

export const quote = (name) => `"${name.replaceAll('"', '""')}"`;
const RECENT_MS = 24 * 3_600_000;

/** One connection, int8 as a JS number (the other seeders use it too). */
export function connect(url) {
  return postgres(url, {
    max: 1,
    onnotice: () => {},
    types: { bigint: { to: 20, from: [20], serialize: (n) => String(n), parse: (s) => Number(s) } },
  });
}

/** Writable columns of a table (no identity, no generated ones) with their types. */
async function columnsOf(sql, table) {
  return sql`SELECT column_name AS name, data_type AS type, udt_name AS udt FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table} AND is_identity = 'NO' AND is_generated = 'NEVER'
    ORDER BY ordinal_position`;
}

/** The table and row whose `id` column holds `id`. */
async function findRow(sql, id) {
  const tables = await sql`SELECT table_name AS name FROM information_schema.columns
    WHERE table_schema = current_schema() AND column_name = 'id' AND data_type = 'text' ORDER BY table_name`;
  for (const { name } of tables) {
    const [row] = await sql.unsafe(`SELECT * FROM ${quote(name)} WHERE id = $1`, [id]);
    if (row) return { table: name, columns: await columnsOf(sql, name), row };
  }
  throw new Error(`pg seed: no table holds a row with id ${id}`);
}

// One sequence per process, so two datasets never share an id.
let seq = 0;
/** SQL for ids shaped like the template's (same prefix and length): prefix + tag + hex of `n`. */
function idExpr(templateId, tag, nExpr) {
  const cut = templateId.lastIndexOf("_");
  const prefix = cut > 0 ? templateId.slice(0, cut + 1) : "";
  const width = Math.max(12, templateId.length - prefix.length);
  return `${literal(prefix + tag)} || lpad(to_hex(${nExpr}), ${width - tag.length}, '0')`;
}
const literal = (s) => `'${String(s).replaceAll("'", "''")}'`;

/** recordData(i) as SQL text, checked against the JS function so the two never drift (raw-pg-server.mjs seeds with it too). */
export const DATA_EXPR = (i) =>
  `format('{"status":"s%s","category":"c%s","state":"%s","phase":"%s","n":%s,"title":"bench item %s"}', ${i} % 100, (${i} * 7) % 100,` +
  ` CASE WHEN ${i} % 2 = 0 THEN 'open' ELSE 'done' END, CASE WHEN ${i} % 2 = 0 THEN 'open' ELSE 'done' END, ${i}, ${i})`;

export async function checkDataExpr(sql) {
  const rows = await sql.unsafe(`SELECT i, ${DATA_EXPR("i")} AS text FROM generate_series(0, 101) AS g(i) ORDER BY i`);
  for (const { i, text } of rows) {
    if (text !== JSON.stringify(recordData(Number(i)))) throw new Error(`pg seed: SQL record ${i} is ${text}, dataset.mjs makes ${JSON.stringify(recordData(Number(i)))}`);
  }
}

/**
 * Same arguments and answer as cloneSeed (clone-seed.mjs): `recordId` (data = recordData(0))
 * of tenant `tenantId` is the template; `count` gives that tenant records 1..count-1; `spread`
 * gives `spread.realTenantIds` and synthetic tenants up to `spread.tenants` `perTenant` each.
 */
export async function pgCloneSeed(url, { recordId, tenantId, count, spread }) {
  const started = Date.now();
  const sql = connect(url);
  try {
    await checkDataExpr(sql);
    const now = Date.now();
    const rec = await findRow(sql, recordId);
    const names = rec.columns.map((c) => c.name);
    const tenantCols = names.filter((c) => rec.row[c] === tenantId);
    const dataCol = names.find((c) => {
      const v = rec.row[c];
      if (typeof v !== "string" || !v.startsWith("{")) return false;
      try {
        return JSON.parse(v).title === recordData(0).title;
      } catch {
        return false;
      }
    });
    const timeCols = names.filter((c) => typeof rec.row[c] === "number" && Math.abs(rec.row[c] - now) < RECENT_MS);
    if (tenantCols.length === 0 || !dataCol) throw new Error(`pg seed: cannot tell the tenant and data columns of ${rec.table} (${names.join(", ")})`);

    /** INSERT … SELECT over `from`, which yields `i` (the record's index in dataset.mjs), `tenant`, `at` and `n` (a unique number). */
    const insertRecords = async (from, params) => {
      const exprs = rec.columns.map((c) => {
        const cast = `::${c.udt}`;
        if (c.name === "id") return idExpr(recordId, "b", "src.n");
        if (tenantCols.includes(c.name)) return `src.tenant${cast}`;
        if (c.name === dataCol) return `(${DATA_EXPR("src.i")})${cast}`;
        if (timeCols.includes(c.name)) return `src.at${cast}`;
        return `t.${quote(c.name)}`;
      });
      const text = `INSERT INTO ${quote(rec.table)} (${names.map(quote).join(", ")})
        SELECT ${exprs.join(", ")} FROM ${quote(rec.table)} t, (${from}) AS src WHERE t.id = $1`;
      return (await sql.unsafe(text, [recordId, ...params])).count;
    };

    let made = 0;
    const base = seq;
    if (count) {
      // seedTime(i, count) = now - 1 h - (count - i): computed with the same `now - 1 h` for every row.
      const end = seedTime(count, count);
      made += await insertRecords(`SELECT i, $2::text AS tenant, $3::bigint - ($4::bigint - i) AS at, $5::bigint + i AS n FROM generate_series(1, $4::bigint - 1) AS g(i)`, [
        tenantId,
        end,
        count,
        base,
      ]);
      seq += count;
    }
    if (spread) {
      const synthetic = await syntheticTenants(sql, tenantId, spread.tenants - spread.realTenantIds.length);
      const tenantIds = [...spread.realTenantIds, ...synthetic];
      const total = tenantIds.length * spread.perTenant;
      // Record i of tenant k (k from 0) is number i * tenants + k of the whole set, as in clone-seed.mjs.
      made += await insertRecords(
        `SELECT i, u.tenant, $2::bigint - ($3::bigint - (i * $4::bigint + u.k - 1)) AS at, $5::bigint + i * $4::bigint + u.k AS n
         FROM unnest($6::text[]) WITH ORDINALITY AS u(tenant, k), generate_series(0, $7::bigint - 1) AS g(i)
         WHERE NOT (i = 0 AND u.tenant = $8::text)`,
        [seedTime(total, total), total, tenantIds.length, seq, tenantIds, spread.perTenant, tenantId],
      );
      seq += total + 1;
    }
    // What the SQLite seeder's checkpoint is there: the load must not meet the seeding's
    // aftermath (autovacuum of a million fresh rows, a checkpoint writing them out).
    const insertMs = Date.now() - started;
    const steps = await settleSeeded(sql, [rec.table]);
    return { table: rec.table, rows: made, ms: Date.now() - started, warnings: [], steps: { insertMs, ...steps } };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * After a seeding, what the SQLite seeder's checkpoint is there: `VACUUM (ANALYZE)` of the
 * seeded tables and `CHECKPOINT`, so the load meets neither autovacuum nor the write-out of
 * the fresh rows. Answers how long each took.
 */
export async function settleSeeded(sql, tables) {
  const started = Date.now();
  await sql.unsafe(`VACUUM (ANALYZE) ${tables.map(quote).join(", ")}`);
  const vacuumed = Date.now();
  await sql.unsafe("CHECKPOINT");
  return { vacuumAnalyzeMs: vacuumed - started, checkpointMs: Date.now() - vacuumed };
}

/** Copies of the template tenant's row with new ids and emails; returns their ids. */
async function syntheticTenants(sql, tenantId, n) {
  const t = await findRow(sql, tenantId);
  const emailCol = t.columns.find((c) => typeof t.row[c.name] === "string" && t.row[c.name].includes("@"))?.name;
  const start = seq;
  seq += n;
  const idSql = idExpr(tenantId, "s", `$2::bigint + i`);
  const exprs = t.columns.map((c) => (c.name === "id" ? idSql : c.name === emailCol ? `'seed' || ($2::bigint + i) || '@bench.invalid'` : `t.${quote(c.name)}`));
  const rows = await sql.unsafe(
    `INSERT INTO ${quote(t.table)} (${t.columns.map((c) => quote(c.name)).join(", ")})
     SELECT ${exprs.join(", ")} FROM ${quote(t.table)} t, generate_series(0, $3::bigint - 1) AS g(i) WHERE t.id = $1 RETURNING id`,
    [tenantId, start, n],
  );
  return rows.map((r) => r.id);
}

/**
 * The words of recordData's strings as a tsvector with positions, in SQL over `doc` (jsonb):
 * each word of searchWordsSql numbered from 1 (duplicates, such as state and phase, merge).
 * Shared with raw-pg-server.mjs, so both sides index the same words.
 */
export const TSVECTOR_EXPR = (doc) =>
  `(SELECT string_agg(format('%L:%s', w, n), ' ')::tsvector FROM unnest(string_to_array(${searchWordsSql((f) => `(${doc} ->> '${f}')`)}, ' ')) WITH ORDINALITY AS u(w, n))`;

/**
 * tenantd's full-text index rows (record_search) for a tenant's seeded records, which the
 * clone leaves without: one INSERT … SELECT. Fails unless a seeded record's row equals what
 * tenantd writes for it (data/text.ts); the parent then counts searches through the API.
 */
export async function pgSeedSearch(url, { tenantId, collection, language }) {
  const started = Date.now();
  const sql = connect(url);
  try {
    const fields = `jsonb_build_object(${["status", "category", "state", "phase", "title"].map((f) => `'${f}', r.doc ->> '${f}'`).join(", ")})`;
    const { count } = await sql.unsafe(
      `INSERT INTO record_search (seq, app_id, collection, lang, tsv, fields)
       SELECT r.seq, r.app_id, r.collection, $1, ${TSVECTOR_EXPR("r.doc")}, ${fields} FROM records r
       WHERE r.tenant_id = $2 AND r.collection = $3 AND NOT EXISTS (SELECT 1 FROM record_search s WHERE s.seq = r.seq)`,
      [language, tenantId, collection],
    );
    const sample = await sql.unsafe(
      `SELECT r.data, s.tsv::text AS tsv, s.fields::text AS fields FROM records r JOIN record_search s ON s.seq = r.seq WHERE r.tenant_id = $1 AND r.collection = $2 ORDER BY r.seq DESC LIMIT 3`,
      [tenantId, collection],
    );
    for (const row of sample) {
      const doc = searchDocument(JSON.parse(row.data), language);
      const [{ tsv, fields: wanted }] = await sql.unsafe(`SELECT $1::tsvector::text AS tsv, $2::text::jsonb::text AS fields`, [tsvectorLiteral(doc.words), JSON.stringify(doc.fields)]);
      if (tsv !== row.tsv || wanted !== row.fields) throw new Error(`pg seed.search: the SQL words of ${row.data} are ${row.tsv} ${row.fields}, tenantd makes ${tsv} ${wanted}`);
    }
    const insertMs = Date.now() - started;
    const steps = await settleSeeded(sql, ["record_search"]);
    return { rows: count, ms: Date.now() - started, steps: { insertMs, ...steps } };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
