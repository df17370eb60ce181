import type { SqliteDb } from "./connection.ts";
import { BOUND_SCOPE } from "./records-sql.ts";
import type { FieldIndexes, FieldIndexRow } from "./record-field-index.ts";
import { createAutoIndexRule } from "../../data/auto-index-rule.ts";
import type { AutoIndexInfo } from "../types.ts";

/**
 * When tenantd builds an index for a field nobody declared. A list whose filter or sort uses
 * such a field over a large collection reports it here; once enough different tenants did
 * (src/data/auto-index-rule.ts: one tenant alone never can), the field gets the same index a
 * declared field gets (record-field-index.ts), built in short chunks after the request, so
 * the following lists read only matching rows and no other app's writes wait for the build.
 */
export const AUTO_INDEX = {
  /** rows of the asking tenant's collection before its ask counts (below, a scan takes under a few ms) */
  minRows: 10_000,
  /** different tenants, each with minRows, who must list on the field within askWindowMs */
  minTenants: 3,
  askWindowMs: 24 * 3600 * 1000,
  /** automatic builds an app may start per askWindowMs */
  buildsPerWindow: 4,
  /** automatic indexes per app; past it, fields are refused (declare the ones that matter) */
  maxPerApp: 16,
  /** an automatic index no list used for this long is dropped (it costs every write) */
  idleMs: 7 * 24 * 3600 * 1000,
  /** a tenant's collection found too small is looked at again after this */
  recheckMs: 10 * 60 * 1000,
  /** last use is written to the database at most this often per index */
  touchMs: 3600 * 1000,
  /** idle indexes are looked for at most this often */
  sweepMs: 3600 * 1000,
} as const;

export type AutoIndexLimits = { [K in keyof typeof AUTO_INDEX]: number };

/** Refused fields remembered per app (the admin list shows them); past it, more are refused without an entry. */
export const MAX_REFUSED_PER_APP = 64;
/** Tenants and fields remembered as recently looked at; past it, the memory starts afresh. */
const MAX_CHECKED = 100_000;

interface Refusal {
  appId: string;
  collection: string;
  path: string;
  reason: string;
  /** asked again after this (a spent budget); never for a full app */
  retryAt: number;
}

const fieldKey = (appId: string, collection: string, path: string) => `${appId}\u0000${collection}\u0000${path}`;

export function createAutoIndexes(db: SqliteDb, fields: FieldIndexes, limits: AutoIndexLimits = AUTO_INDEX) {
  const tenantRows = db.prepare<[string, string, string], number>(`SELECT COUNT(*) FROM records WHERE ${BOUND_SCOPE}`).pluck();
  const rule = createAutoIndexRule(limits);
  const checkedAt = new Map<string, number>();
  const refused = new Map<string, Refusal>();
  /** ix → last use in memory; written to the row at most every touchMs */
  const lastUsed = new Map<number, number>();
  let lastSweep = -Infinity;

  const automatic = (appId: string) => [...fields.rows()].filter((r) => r.app_id === appId && !r.declared);
  const fullReason = (collection: string) =>
    `the app already has ${limits.maxPerApp} automatic indexes: declare the fields you filter on most (collections.${collection}.indexed)`;

  function refuse(r: Refusal) {
    const k = fieldKey(r.appId, r.collection, r.path);
    if (!refused.has(k) && [...refused.values()].filter((x) => x.appId === r.appId).length >= MAX_REFUSED_PER_APP) return;
    refused.set(k, r);
  }
  function forgetRefusals(appId: string, which: (r: Refusal) => boolean) {
    for (const [k, r] of refused) if (r.appId === appId && which(r)) refused.delete(k);
  }

  return {
    /**
     * A list filtered or sorted on these fields without a complete index. Counts the asking
     * tenant towards a build when its collection is large enough for a scan to matter.
     */
    consider(scope: { appId: string; tenantId: string; collection: string }, paths: string[], now: number): void {
      let rows: number | undefined;
      for (const path of paths) {
        const k = fieldKey(scope.appId, scope.collection, path);
        // Declared, or already building: the index is on its way.
        if (fields.find(scope.appId, scope.collection, path)) continue;
        const no = refused.get(k);
        if (no && now < no.retryAt) continue;
        // Per tenant: one tenant's small collection says nothing about another's.
        const checkKey = `${k}\u0000${scope.tenantId}`;
        const at = checkedAt.get(checkKey);
        if (at !== undefined && now - at < limits.recheckMs) continue;
        if (checkedAt.size >= MAX_CHECKED) checkedAt.clear();
        checkedAt.set(checkKey, now);
        rows ??= tenantRows.get(scope.tenantId, scope.appId, scope.collection) ?? 0;
        if (rows < limits.minRows) continue;
        if (automatic(scope.appId).length >= limits.maxPerApp) {
          refuse({ appId: scope.appId, collection: scope.collection, path, reason: fullReason(scope.collection), retryAt: Infinity });
          continue;
        }
        const outcome = rule.ask(scope.appId, scope.collection, path, scope.tenantId, now);
        if (outcome === "budget") {
          refuse({
            appId: scope.appId,
            collection: scope.collection,
            path,
            reason: `the app started ${limits.buildsPerWindow} automatic index builds in the last ${Math.round(limits.askWindowMs / 3_600_000)} h: asked again later, or declare the field (collections.${scope.collection}.indexed)`,
            retryAt: now + limits.recheckMs,
          });
        } else if (outcome === "build") {
          refused.delete(k);
          fields.add(scope.appId, scope.collection, path, false, now);
        }
      }
    },
    /** A list used these indexes: automatic ones stay. */
    touch(appId: string, collection: string, used: string[], now: number): void {
      for (const path of used) {
        const row = fields.find(appId, collection, path);
        if (!row || row.declared) continue;
        lastUsed.set(row.ix, Math.max(lastUsed.get(row.ix) ?? 0, now));
        if (now - row.last_used_at >= limits.touchMs) fields.touch(row, now);
      }
    },
    /** Drops automatic indexes no list used for `idleMs`; looks at most every `sweepMs`. */
    sweep(now: number): void {
      if (now - lastSweep < limits.sweepMs) return;
      lastSweep = now;
      for (const row of [...fields.rows()]) {
        if (row.declared || row.build_to !== null) continue;
        if (now - Math.max(row.last_used_at, lastUsed.get(row.ix) ?? 0) >= limits.idleMs) {
          lastUsed.delete(row.ix);
          fields.drop(row);
        }
      }
    },
    /** Fields now declared are served by their index as it is: no refusal stays listed. */
    declared(appId: string, declared: { collection: string; path: string }[]): void {
      forgetRefusals(appId, (r) => declared.some((f) => f.collection === r.collection && f.path === r.path));
    },
    /** Drops every index of the app (the app is being deleted). */
    dropApp(appId: string): void {
      for (const row of [...fields.rows()]) if (row.app_id === appId) fields.drop(row);
      forgetRefusals(appId, () => true);
      rule.forgetApp(appId);
    },
    /** What an admin sees: built, building and refused automatic indexes of the app. */
    list(appId: string): AutoIndexInfo[] {
      const out: AutoIndexInfo[] = automatic(appId).map((r: FieldIndexRow) =>
        r.build_to === null
          ? {
              collection: r.collection,
              field: r.path,
              state: "ready",
              name: `record_field_entries#${r.ix}`,
              reason: null,
              rows: r.rows,
              buildMs: r.build_ms,
              createdAt: r.created_at,
              lastUsedAt: Math.max(r.last_used_at, lastUsed.get(r.ix) ?? 0),
            }
          : { collection: r.collection, field: r.path, state: "pending", name: null, reason: null, rows: null, buildMs: null, createdAt: null, lastUsedAt: null },
      );
      const blank = { name: null, rows: null, buildMs: null, createdAt: null, lastUsedAt: null };
      for (const r of refused.values()) if (r.appId === appId) out.push({ collection: r.collection, field: r.path, state: "refused", reason: r.reason, ...blank });
      return out.sort((a, b) => a.collection.localeCompare(b.collection) || a.field.localeCompare(b.field));
    },
  };
}

export type AutoIndexes = ReturnType<typeof createAutoIndexes>;
