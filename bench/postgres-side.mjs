// The "tenantd on PostgreSQL" column of a scenario: the same requests as the SQLite-backed
// tenantd gets (the scenario's `tenantd` setup, on fixtures made through the PostgreSQL
// node's API), measured right after the raw baseline of the same scenario. Its failures
// stay in its own column: they never take the SQLite figures of the row with them.
import { Skip, call } from "./http.mjs";
import { measureSide, measureStorm } from "./measure.mjs";

/** A plan line of PostgreSQL's EXPLAIN that reads one of tenantd's per-field expression indexes. */
const FIELD_INDEX = /(Index Scan|Index Only Scan|Bitmap Index Scan)( Backward)? (using|on) "?records_f_/;

export async function runPostgresScenario({ scenario, pg, f, connections, warmup, duration, raw }) {
  try {
    let out;
    if (scenario.custom === "storm") {
      const { login, me } = scenario.storm.tenantd;
      out = await measureStorm({ child: pg.node, login, me, f, duration });
    } else {
      const side = await scenario.tenantd(f, { connections });
      out = await measureSide({ scenario, children: pg.node, side, connections, warmup, duration, serverCpuMs: pg.server.cpuMs });
      if (scenario.explain) {
        out.plan = await explainList(pg, f, scenario.explain);
        out.planUsesFieldIndex = out.plan.some((l) => FIELD_INDEX.test(l)) && !out.plan.some((l) => /Seq Scan/.test(l));
      }
    }
    if (raw?.rps) out.ratio = out.rps / raw.rps;
    return out;
  } catch (e) {
    if (e instanceof Skip) return { skipped: e.message };
    return { failed: e instanceof Error ? e.message : String(e) };
  } finally {
    await pg.server.checkpoint().catch(() => {});
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
