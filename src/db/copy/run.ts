import type { CopyEnd } from "./end.ts";
import { COPY_MARKER, COPY_TABLES, type CopyTable, type CopyValue } from "./tables.ts";
import { KEY_FINGERPRINT } from "../postgres/meta.ts";

/**
 * server_meta rows a copy leaves behind: the marker of a copy in progress (the source may be
 * an unfinished target itself), and the fingerprint of the key a PostgreSQL database's nodes
 * share, which the target records for its own nodes when they start.
 */
const UNCOPIED_META = [COPY_MARKER, KEY_FINGERPRINT];

export interface CopyProgress {
  table(name: string, total: number): void;
  rows(name: string, done: number, total: number): void;
  tableDone(name: string, rows: number, ms: number): void;
}

export interface TableCount {
  table: string;
  source: number;
  target: number;
  ok: boolean;
}

/** Rows per page read from the source (and per insert batch, unless the rows are large). */
export const DEFAULT_BATCH = 2000;
/** An insert batch stops growing at this many bytes of values (a page of large records becomes several statements). */
const BATCH_BYTES = 8 * 1024 * 1024;

const sizeOf = (row: CopyValue[]) => row.reduce<number>((n, v) => n + (typeof v === "string" ? v.length : 8), 0);

/** What a target holds already: the tables with rows, and whether an unfinished copy left them. */
export async function targetContents(target: CopyEnd): Promise<{ tables: { table: string; rows: number }[]; unfinishedCopy: string | null }> {
  const tables: { table: string; rows: number }[] = [];
  for (const table of COPY_TABLES) {
    const rows = await target.count(table);
    if (rows > 0) tables.push({ table: table.name, rows });
  }
  return { tables, unfinishedCopy: await target.getMeta(COPY_MARKER) };
}

/** Empties every table a copy writes (`--restart`). */
export const emptyTarget = (target: CopyEnd) => target.empty(COPY_TABLES);

/**
 * Copies every table of COPY_TABLES from one consistent snapshot of the source, page by page
 * in key order, each batch committed on its own. The target is marked as a copy in progress
 * first and unmarked last, so a copy that stops halfway leaves a target the next run
 * recognises (and refuses until `--restart`).
 */
export async function copyTables(source: CopyEnd, target: CopyEnd, opts: { batch?: number; progress?: CopyProgress; now?: () => number; describe: string }): Promise<void> {
  const batch = opts.batch ?? DEFAULT_BATCH;
  const now = opts.now ?? Date.now;
  await target.setMeta(COPY_MARKER, JSON.stringify({ startedAt: new Date(now()).toISOString(), from: opts.describe }));
  for (const table of COPY_TABLES) {
    const started = now();
    const total = await source.count(table);
    opts.progress?.table(table.name, total);
    let done = 0;
    await eachPage(source, table, batch, {}, async (rows) => {
      const copied = table.name === "server_meta" ? rows.filter((r) => !UNCOPIED_META.includes(r[0] as string)) : rows;
      for (const chunk of bySize(copied)) {
        try {
          await target.insert(table, chunk);
        } catch (e) {
          throw new Error(`${table.name}: writing rows ${done + 1}–${done + rows.length} into ${target.label} failed: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      done += rows.length;
      opts.progress?.rows(table.name, done, total);
    });
    if (table.deferred) await eachPage(source, table, batch, { deferredOnly: true }, (rows) => target.setDeferred(table, rows));
    await target.finishTable(table);
    opts.progress?.tableDone(table.name, done, now() - started);
  }
  await target.setMeta(COPY_MARKER, null);
}

async function eachPage(source: CopyEnd, table: CopyTable, batch: number, opts: { deferredOnly?: boolean }, fn: (rows: CopyValue[][]) => Promise<void>): Promise<void> {
  let cursor: CopyValue[] | null = null;
  for (;;) {
    const page: { rows: CopyValue[][]; cursor: CopyValue[] | null } = await source.page(table, cursor, batch, opts);
    if (page.rows.length > 0) await fn(page.rows);
    if (page.rows.length < batch) return;
    cursor = page.cursor;
  }
}

function* bySize(rows: CopyValue[][]): Generator<CopyValue[][]> {
  let chunk: CopyValue[][] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = sizeOf(row);
    if (chunk.length > 0 && bytes + size > BATCH_BYTES) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

/** Rows per table on both sides, after the copy (the source counted in its snapshot). */
export async function compareCounts(source: CopyEnd, target: CopyEnd): Promise<TableCount[]> {
  const out: TableCount[] = [];
  for (const table of COPY_TABLES) {
    let s = await source.count(table);
    const t = await target.count(table);
    // Rows of server_meta that are not copied: an unfinished copy's marker, a PostgreSQL cluster's key fingerprint.
    if (table.name === "server_meta") for (const key of UNCOPIED_META) if ((await source.getMeta(key)) !== null) s -= 1;
    out.push({ table: table.name, source: s, target: t, ok: s === t });
  }
  return out;
}
