// The printed table and the JSON file of a run.
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";

const fmt = (n, digits = 0) => (n === undefined || n === null || Number.isNaN(n) ? "" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
// autocannon keeps latencies in whole milliseconds: 0 means under 1 ms.
const ms = (n) => (n === undefined ? "" : n === 0 ? "<1" : n < 10 ? fmt(n, 1) : fmt(n, 0));

export function machine() {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** Whether the row meets its target, and the figure the target is judged on. */
export function judge(row, argon2Bound) {
  const t = row.target;
  const td = row.tenantd;
  if (!t || !td || row.skipped) return undefined;
  switch (t.kind) {
    case "ratio":
      return row.ratio === undefined ? undefined : { met: row.ratio >= t.min, figure: `${fmt(row.ratio, 2)} ×` };
    case "p50": {
      // The plan must search an index on the filtered field (an expression index: `<expr>=?`).
      const indexed = row.planUsesFieldIndex;
      const figure = `p50 ${ms(td.p50)} ms${indexed === false ? ", index NOT used" : indexed ? ", index used" : ""}`;
      return { met: td.p50 <= t.maxMs && indexed !== false, figure };
    }
    case "argon2": {
      if (!argon2Bound) return undefined;
      const r = td.rps / argon2Bound;
      return { met: r >= t.min, figure: `${fmt(r, 2)} × bound` };
    }
    case "loopP99":
      return { met: td.loopP99Ms <= t.maxMs, figure: `${ms(td.loopP99Ms)} ms` };
    case "rssGrowth":
      return { met: td.rssGrowthMb < t.maxMb, figure: `+${fmt(td.rssGrowthMb, 0)} MB` };
    case "relative":
      return row.relative;
  }
  return undefined;
}

/**
 * A `relative` target (scenarios.mjs): `side` (a row's tenantd figures, or its PostgreSQL
 * ones) against `ref`, the same side of the row the target names. Undefined when that row
 * was not measured in this run.
 */
export function judgeRelative(target, side, ref) {
  if (!side?.rps || !ref?.rps) return undefined;
  if (target.measure === "latency") {
    const value = ref.rps / side.rps;
    return { met: value <= target.max, figure: `${fmt(value, 2)} × (p50 ${ms(side.p50)} / ${ms(ref.p50)} ms)` };
  }
  const value = (side.rps * target.perRequest) / ref.rps;
  return { met: value >= target.min, figure: `${fmt(value, 1)} × (${fmt(side.rps * target.perRequest)} records/s)` };
}

const COLUMNS = ["scenario", "tenantd req/s", "p50 ms", "p99 ms", "raw req/s", "p50 ms", "p99 ms", "tenantd/raw", "target", "measured", "met?", "CPU µs/req tenantd / raw", "tenantd RSS MB"];

export function tableRows(rows, argon2Bound) {
  return rows.map((row) => {
    if (row.skipped || row.failed) return [row.name, row.skipped ?? `failed: ${row.failed.split("\n")[0].slice(0, 160)}`];
    // A control row shows the second baseline in tenantd's columns (run.mjs, runControl).
    const td = row.tenantd ?? row.rawB ?? {};
    const raw = row.raw ?? {};
    const verdict = judge(row, argon2Bound);
    return [
      row.name,
      fmt(td.rps),
      ms(td.p50),
      ms(td.p99),
      fmt(raw.rps),
      ms(raw.p50),
      ms(raw.p99),
      row.ratio === undefined ? "" : fmt(row.ratio, 2),
      row.target?.text ?? (row.rawB ? "none: raw B / raw" : ""),
      verdict?.figure ?? "",
      verdict ? (verdict.met ? "yes" : "NO") : "",
      td.cpuUsPerRequest === undefined ? "" : `${fmt(td.cpuUsPerRequest)} / ${fmt(raw.cpuUsPerRequest)}`,
      fmt(row.tenantd?.rssMb),
    ];
  });
}

/** Issue 40: every PostgreSQL row at least 0.85 × the raw PostgreSQL baseline of the same run. */
export const PG_TARGET = { kind: "ratio", min: 0.85, text: "≥ 0.85 × raw-pg" };

/**
 * Whether the row's PostgreSQL pair meets PG_TARGET (tenantd-pg / raw-pg), and that figure. A
 * row whose baseline is tenantd itself (`baselineOnTenantd`) is judged on its own target.
 */
export function judgePg(row) {
  const p = row.postgres;
  if (!p || p.skipped || p.failed || p.rawPgRatio === undefined) return undefined;
  // A latency target on tenantd's own baseline (org-members-10k) is the latency on PostgreSQL too.
  if (row.baselineOnTenantd && row.target.kind === "p50") {
    const max = row.target.pgMaxMs ?? row.target.maxMs;
    return { met: p.p50 <= max, figure: `p50 ${p.p50} ms` };
  }
  const min = row.baselineOnTenantd ? row.target.min : PG_TARGET.min;
  return { met: p.rawPgRatio >= min, figure: `${fmt(p.rawPgRatio, 2)} ×` };
}

/** Whether tenantd-pg meets the row's target against Parse Server (parse-peer.mjs), and that figure. */
export function judgeParse(row) {
  const p = row.postgres;
  if (!p?.parseTarget || p.parseRatio === undefined) return undefined;
  return { met: p.parseRatio >= p.parseTarget.min, figure: `${fmt(p.parseRatio, 2)} ×` };
}

// With tenantd on PostgreSQL in the run: the SQLite pair's columns as without it, then the
// PostgreSQL pair's (tenantd-pg against the raw PostgreSQL baseline, judged on PG_TARGET).
const PG_COLUMNS = [
  "scenario", "tenantd req/s", "p50 ms", "p99 ms", "raw req/s", "p50 ms", "p99 ms", "tenantd/raw", "target", "measured", "met?",
  "tenantd-pg req/s", "p50 ms", "p99 ms", "raw-pg req/s", "p50 ms", "p99 ms", "pg/raw-pg", `pg ${PG_TARGET.text}?`,
  "CPU µs/req tenantd / raw", "CPU µs/req tenantd-pg + PostgreSQL / raw-pg + PostgreSQL", "tenantd RSS MB", "tenantd-pg RSS MB", "load avg",
];

// With Parse as a peer: its figures and tenantd-pg's ratio to it (and the target, where one is set).
const PARSE_COLUMNS = ["parse req/s", "p50 ms", "p99 ms", "pg/parse", "pg/parse target met?"];

function parseCells(row) {
  const p = row.postgres ?? {};
  if (p.parseFailed) return [p.parseFailed.slice(0, 120), "", "", "", ""];
  if (!p.parse) return ["", "", "", "", ""];
  const verdict = judgeParse(row);
  return [fmt(p.parse.rps), ms(p.parse.p50), ms(p.parse.p99), p.parseRatio === undefined ? "" : fmt(p.parseRatio, 2), verdict ? `${p.parseTarget.text}: ${verdict.met ? "yes" : "NO"}` : ""];
}

function pgTableRows(rows, argon2Bound, withParse) {
  const sqlite = tableRows(rows, argon2Bound);
  return rows.map((row, i) => {
    const s = sqlite[i];
    const sq = s.length === 2 ? [s[0], s[1], ...Array(11).fill("")] : s;
    const p = row.postgres ?? {};
    const pgNote = p.skipped ?? (p.failed ? `failed: ${p.failed.split("\n")[0].slice(0, 120)}` : undefined);
    const rawPg = (!pgNote && p.rawPg) || {};
    const verdict = judgePg(row);
    const withDb = (x) => (x?.cpuUsPerRequest === undefined ? "" : `${fmt(x.cpuUsPerRequest)}${x.dbCpuUsPerRequest !== undefined ? ` + ${fmt(x.dbCpuUsPerRequest)}` : ""}`);
    return [
      ...sq.slice(0, 11),
      pgNote ?? fmt(p.rps), pgNote ? "" : ms(p.p50), pgNote ? "" : ms(p.p99),
      fmt(rawPg.rps), ms(rawPg.p50), ms(rawPg.p99),
      p.rawPgRatio === undefined ? "" : fmt(p.rawPgRatio, 2),
      verdict ? `${verdict.met ? "yes" : "NO"}${row.baselineOnTenantd ? ` (${row.target.text})` : ""}` : "",
      ...(withParse ? parseCells(row) : []),
      sq[11],
      pgNote || p.cpuUsPerRequest === undefined ? "" : `${withDb(p)} / ${withDb(rawPg)}`,
      sq[12], fmt(p.rssMb), fmt(row.loadAverage, 1),
    ];
  });
}

/** A GitHub-flavoured Markdown table: reads in a terminal and pastes into docs/performance.md. */
export function markdownTable(rows, argon2Bound) {
  if (rows.some((r) => r.postgres)) {
    const withParse = rows.some((r) => r.postgres?.parse || r.postgres?.parseFailed);
    const columns = withParse ? [...PG_COLUMNS.slice(0, 19), ...PARSE_COLUMNS, ...PG_COLUMNS.slice(19)] : PG_COLUMNS;
    const body = pgTableRows(rows, argon2Bound, withParse).map((cells) => `| ${cells.join(" | ")} |`);
    return [`| ${columns.join(" | ")} |`, `|${columns.map((_, i) => (i === 0 || i === 8 ? "---" : "---:")).join("|")}|`, ...body].join("\n");
  }
  const body = tableRows(rows, argon2Bound).map((cells) => {
    const full = cells.length === 2 ? [cells[0], ...COLUMNS.slice(1).map((_, i) => (i === 0 ? cells[1] : ""))] : cells;
    return `| ${full.join(" | ")} |`;
  });
  return [`| ${COLUMNS.join(" | ")} |`, `|${COLUMNS.map((_, i) => (i === 0 || i === 8 ? "---" : "---:")).join("|")}|`, ...body].join("\n");
}

export function writeResults(dir, result) {
  mkdirSync(dir, { recursive: true });
  const stamp = result.startedAt.replace(/[:.]/g, "-");
  const text = JSON.stringify(result, null, 2) + "\n";
  writeFileSync(`${dir}/${stamp}.json`, text);
  writeFileSync(`${dir}/latest.json`, text);
  return `${dir}/${stamp}.json`;
}
