// The "tenantd on PostgreSQL" column of a scenario: the same requests as the SQLite-backed
// tenantd gets (the scenario's `tenantd` setup, on fixtures made through the PostgreSQL
// node's API), measured against the raw PostgreSQL baseline (raw-pg-server.mjs, the
// scenario's `raw` setup) on the same server, the two taking turns round by round exactly as
// tenantd and raw do on SQLite. Its failures stay in its own column: they never take the
// SQLite figures of the row with them.
import { Skip, call } from "./http.mjs";
import { measureInterleaved, measureStorm, pairedRatio } from "./measure.mjs";
import { parseSide, parseTarget } from "./parse-peer.mjs";

/** A plan line of PostgreSQL's EXPLAIN that reads one of tenantd's per-field expression indexes. */
const FIELD_INDEX = /(Index Scan|Index Only Scan|Bitmap Index Scan)( Backward)? (using|on) "?records_f_/;

/**
 * `rawSqlite`: the raw SQLite baseline's figures of the same scenario, for `ratio` (tenantd-pg
 * over raw SQLite, as before the raw PostgreSQL baseline existed). `rawPgRatio` is the figure
 * judged: tenantd-pg over raw-pg, the median of the rounds' ratios. `pf`: Parse's fixtures
 * (parse-peer.mjs) when Parse runs as a peer; in its rows it takes turns with the other two.
 */
export async function runPostgresScenario({ scenario, pg, f, pf, connections, warmup, duration, rounds, rawSqlite }) {
  // Before each round and after the row: the other side's leftover queries finish, then CHECKPOINT.
  const quiesce = () => pg.server.quiesce().catch(() => {});
  try {
    let out;
    if (scenario.custom === "storm") {
      // Not taken in turns, as on SQLite (run.mjs, runStorm): one load per side.
      const storm = (child, { login, me }) => measureStorm({ child, login, me, f, duration: duration * rounds });
      out = await storm(pg.node, scenario.storm.tenantd);
      await quiesce();
      out.rawPg = await storm(pg.raw, scenario.storm.raw);
      // A baseline that answered nothing in the load (a busy machine) gives no ratio.
      if (out.rawPg.rps > 0) out.rawPgRatio = out.rps / out.rawPg.rps;
    } else {
      // tenantd's setup first: a missing endpoint skips the row before the baseline is seeded.
      await scenario.tenantd(f, { connections });
      const rawSide = await scenario.raw(f, { connections });
      // Asked again after the baseline's seeding: the fixtures refresh tokens older than 5 minutes.
      const tdSide = await scenario.tenantd(f, { connections });
      // Parse's setup failing (it is someone else's server) leaves the pair measured without it.
      let parse;
      let parseNote;
      try {
        parse = pf && (await parseSide(scenario.name, pf));
      } catch (e) {
        parseNote = `parse: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`;
      }
      let rawPg;
      let parsed;
      [out, rawPg, parsed] = await measureInterleaved({
        scenario,
        sides: [
          { children: pg.node, side: tdSide },
          { children: scenario.baselineOnTenantd ? pg.node : pg.raw, side: rawSide },
          ...(parse ? [{ children: pg.parse, side: parse }] : []),
        ],
        rounds: scenario.amount ? 1 : rounds,
        connections,
        warmup,
        duration,
        serverCpuMs: pg.server.cpuMs,
        beforeRound: quiesce,
      });
      out.rawPg = rawPg;
      if (parseNote) out.parseFailed = parseNote;
      if (parsed) {
        out.parse = parsed;
        const ratio = parsed.rps > 0 ? pairedRatio(out, parsed) : {};
        out.parseRatio = ratio.ratio;
        if (ratio.roundRatios) out.parseRoundRatios = ratio.roundRatios;
        out.parseTarget = parseTarget(scenario.name);
      }
      // The baseline answers every request; if it did not, its figure is not a baseline.
      if (out.rawPg.non2xx || out.rawPg.errors) throw new Error(`raw-pg: ${out.rawPg.non2xx} non-2xx answers and ${out.rawPg.errors} errors during the load`);
      if (!(out.rawPg.rps > 0)) throw new Error("raw-pg answered no request during the load: no baseline");
      const paired = pairedRatio(out, out.rawPg, scenario.requestsPerOperation);
      out.rawPgRatio = paired.ratio;
      if (paired.roundRatios) out.rawPgRoundRatios = paired.roundRatios;
      if (scenario.explain) {
        out.plan = await explainList(pg, f, scenario.explain);
        out.planUsesFieldIndex = out.plan.some((l) => FIELD_INDEX.test(l)) && !out.plan.some((l) => /Seq Scan/.test(l));
        out.rawPgPlan = await explainRaw(pg, f, scenario.explain);
      }
    }
    if (rawSqlite?.rps) out.ratio = out.rps / rawSqlite.rps;
    return out;
  } catch (e) {
    if (e instanceof Skip) return { skipped: e.message };
    return { failed: e instanceof Error ? e.message : String(e) };
  } finally {
    await quiesce();
  }
}

/** EXPLAIN of the page query the list runs, from the node's records repository, after one real request. */
async function explainList(pg, f, { collection, filter }) {
  const { tenant } = await f.td.big();
  await call(pg.node.url, "GET", `/api/v1/data/${collection}?filter=${encodeURIComponent(JSON.stringify(filter))}&limit=20`, { bearer: tenant.bearer });
  try {
    return await pg.node.call("explain.list", { appId: f.td.appId, tenantId: tenant.id, collection, filter });
  } catch (e) {
    return [`(could not explain: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]})`];
  }
}

/** The raw PostgreSQL baseline's plan of the same page. */
async function explainRaw(pg, f, { collection, filter }) {
  const [[field, value]] = Object.entries(filter);
  return pg.raw.call("explain", { tenantId: (await f.raw.big()).tenant.id, collection, field, value });
}
