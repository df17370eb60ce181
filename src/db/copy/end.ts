import type { CopyTable, CopyValue } from "./tables.ts";

/**
 * One side of a `tenantd store copy`, the same shape on both engines: it reads pages of a
 * table in key order from one consistent snapshot, and writes batches (each in its own
 * transaction). The copy loop (src/db/copy/run.ts) never sees SQL.
 */
export interface CopyEnd {
  engine: "sqlite" | "postgres";
  /** Where it is, for messages: a path, or a URL without its password. */
  label: string;
  /** Pins one snapshot for every read that follows, until close (a copy of a store in use stays consistent). */
  snapshot(): Promise<void>;
  count(table: CopyTable): Promise<number>;
  /**
   * Up to `limit` rows after `after` (the previous page's cursor; null: from the start), each
   * the table's columns in COPY_TABLES order, with the cursor of the last row. With
   * `deferredOnly`, only rows whose deferred columns are set, as key columns then deferred ones.
   */
  page(table: CopyTable, after: CopyValue[] | null, limit: number, opts?: { deferredOnly?: boolean }): Promise<{ rows: CopyValue[][]; cursor: CopyValue[] | null }>;
  /** Inserts rows (deferred columns left null) in one transaction. */
  insert(table: CopyTable, rows: CopyValue[][]): Promise<void>;
  /** Sets the deferred columns of rows given as key columns then deferred ones, in one transaction. */
  setDeferred(table: CopyTable, rows: CopyValue[][]): Promise<void>;
  /** After a table's rows: identity sequences move past the copied values. */
  finishTable(table: CopyTable): Promise<void>;
  /** Deletes every row of these tables (children first). */
  empty(tables: CopyTable[]): Promise<void>;
  getMeta(key: string): Promise<string | null>;
  setMeta(key: string, value: string | null): Promise<void>;
  close(): Promise<void>;
}

/** Key columns, then the deferred ones: what `page(…, { deferredOnly })` returns and `setDeferred` takes. */
export const deferredColumns = (table: CopyTable) => [...table.key, ...(table.deferred ?? [])];
