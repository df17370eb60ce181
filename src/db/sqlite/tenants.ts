import type { SqliteDb } from "./connection.ts";
import { prepareSessionInsert } from "./sessions.ts";
import { createRowCache } from "./row-cache.ts";
import type { InTransactionStep, NewSession, TenantListFilter, TenantRow } from "../types.ts";

const COLUMNS = ["id", "app_id", "email", "password_hash", "email_verified_at", "locale", "parent_tenant_id", "created_at"] as const;

/**
 * The columns of a tenant row, in the order toTenant reads them (`alias`: the table's alias
 * in a join). Tenant rows are read in better-sqlite3's raw mode, as arrays: the bearer
 * endpoints read one on every request, and an object row has each column name set on it.
 */
export const tenantColumns = (alias = "") => COLUMNS.map((c) => `${alias}${c}`).join(", ");

/** A tenant row read with `.raw(true)`, in tenantColumns() order. */
export type RawTenant = [
  id: string,
  appId: string,
  email: string,
  passwordHash: string | null,
  emailVerifiedAt: number | null,
  locale: string,
  parentTenantId: string | null,
  createdAt: number,
];

export const toTenant = (r: RawTenant): TenantRow => ({
  id: r[0],
  appId: r[1],
  email: r[2],
  passwordHash: r[3],
  emailVerifiedAt: r[4],
  locale: r[5],
  parentTenantId: r[6],
  createdAt: r[7],
});

export type TenantsRepo = ReturnType<typeof createTenantsRepo>;

/** Tenant rows kept in memory (findById with a clock); past it the earliest loaded go first. */
const TENANT_CACHE_SIZE = 50_000;

export function createTenantsRepo(db: SqliteDb) {
  const insertSession = prepareSessionInsert(db);
  const rowById = db.prepare<[string], RawTenant>(`SELECT ${tenantColumns()} FROM tenants WHERE id = ?`).raw(true);
  // Frozen: the same object goes to every request that reads the tenant.
  const byId = (id: string) => {
    const r = rowById.get(id);
    return r && Object.freeze(toTenant(r));
  };
  const rows = createRowCache(db, "tenants", byId, TENANT_CACHE_SIZE);
  const q = {
    insert: db.prepare<[string, string, string, string | null, number | null, string, string | null, number]>(
      "INSERT INTO tenants (id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    byEmail: db.prepare<[string, string], RawTenant>(`SELECT ${tenantColumns()} FROM tenants WHERE app_id = ? AND email = ?`).raw(true),
    list: db
      .prepare<[string, string, number, number], RawTenant>(
        `SELECT ${tenantColumns()} FROM tenants WHERE app_id = ? AND email LIKE ? ESCAPE '\\' AND email <> id ORDER BY created_at DESC, id LIMIT ? OFFSET ?`,
      )
      .raw(true),
    count: db.prepare<[string, string], { n: number }>("SELECT COUNT(*) AS n FROM tenants WHERE app_id = ? AND email LIKE ? ESCAPE '\\' AND email <> id"),
    setVerified: db.prepare<[number, string]>("UPDATE tenants SET email_verified_at = COALESCE(email_verified_at, ?) WHERE id = ?"),
    setPassword: db.prepare<[string, string]>("UPDATE tenants SET password_hash = ? WHERE id = ?"),
    setLocale: db.prepare<[string, string]>("UPDATE tenants SET locale = ? WHERE id = ?"),
    remove: db.prepare<[string, string]>("DELETE FROM tenants WHERE app_id = ? AND id = ?"),
  };

  const insertWithSession = db.transaction((t: TenantRow, s: NewSession, step?: InTransactionStep) => {
    q.insert.run(t.id, t.appId, t.email, t.passwordHash, t.emailVerifiedAt, t.locale, t.parentTenantId, t.createdAt);
    insertSession(t.id, t.appId, s);
    step?.(t.id);
  });

  return {
    /**
     * Creates the tenant and its first session in one transaction. Throws on a duplicate
     * email. `step` runs last in the same transaction (an invite being used up); when it
     * throws, nothing is created.
     */
    async createWithSession(tenant: TenantRow, session: NewSession, step?: InTransactionStep): Promise<void> {
      insertWithSession.immediate(tenant, session, step);
    },
    async findByEmail(appId: string, email: string): Promise<TenantRow | undefined> {
      const r = q.byEmail.get(appId, email);
      return r && toTenant(r);
    },
    /**
     * With `now` (the caller's clock) the row may come from memory: every change to it on
     * this connection is seen at once, another process's within FRESHNESS_MS (data-version.ts).
     * `me` and introspection read it on every request.
     */
    findById(appId: string, id: string, now?: number): TenantRow | undefined {
      const row = now === undefined ? byId(id) : rows.get(id, now);
      return row?.appId === appId ? row : undefined;
    },
    /** Newest first; `emailContains` filters by a substring of the email. */
    async list(appId: string, opts: TenantListFilter & { limit: number; offset: number }): Promise<{ tenants: TenantRow[]; total: number }> {
      const like = `%${(opts.emailContains ?? "").replace(/[\\%_]/g, (c) => "\\" + c)}%`;
      if (opts.verified === undefined && opts.createdFrom === undefined && opts.createdBefore === undefined) {
        return {
          tenants: q.list.all(appId, like, opts.limit, opts.offset).map(toTenant),
          total: q.count.get(appId, like)!.n,
        };
      }
      // The rarer filtered search (CLI, dashboard) builds its WHERE from fixed fragments only.
      const where = ["app_id = ?", "email LIKE ? ESCAPE '\\'", "email <> id"];
      const params: (string | number)[] = [appId, like];
      if (opts.verified !== undefined) where.push(opts.verified ? "email_verified_at IS NOT NULL" : "email_verified_at IS NULL");
      if (opts.createdFrom !== undefined) where.push("created_at >= ?"), params.push(opts.createdFrom);
      if (opts.createdBefore !== undefined) where.push("created_at < ?"), params.push(opts.createdBefore);
      const sql = `FROM tenants WHERE ${where.join(" AND ")}`;
      return {
        tenants: db
          .prepare<(string | number)[], RawTenant>(`SELECT ${tenantColumns()} ${sql} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`)
          .raw(true)
          .all(...params, opts.limit, opts.offset)
          .map(toTenant),
        total: db.prepare<(string | number)[], { n: number }>(`SELECT COUNT(*) AS n ${sql}`).get(...params)!.n,
      };
    },
    async markVerified(id: string, at: number): Promise<void> {
      q.setVerified.run(at, id);
    },
    async setPasswordHash(id: string, hash: string): Promise<void> {
      q.setPassword.run(hash, id);
    },
    async setLocale(id: string, locale: string): Promise<void> {
      q.setLocale.run(locale, id);
    },
    /** Deletes the tenant; every row it owns goes with it (foreign keys cascade). */
    async remove(appId: string, id: string): Promise<boolean> {
      return q.remove.run(appId, id).changes > 0;
    },
  };
}
