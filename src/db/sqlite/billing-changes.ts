import type { SqliteDb } from "./connection.ts";
import { dataVersionWatcher } from "./data-version.ts";

/**
 * A number that moves whenever anything a tenant's entitlements derive from may have
 * changed: plans, subscriptions (paid, gift, trial), family membership, an owner's email
 * (shown on a member's family subscription). The effective-entitlements cache
 * (src/billing/effective.ts) keeps an answer while this number stays put.
 *
 * Nothing has to remember to bump it: TEMP triggers on this connection fire on every write
 * to those tables (cascades from a tenant or app deleted included), and a commit by any other
 * connection (the CLI, a second process) changes SQLite's `data_version`, read at most every
 * FRESHNESS_MS of `now` (data-version.ts; on every call without `now`).
 */
export function createBillingChanges(db: SqliteDb) {
  let version = 0;
  const others = dataVersionWatcher(db);
  others.listeners.add(() => version++);
  db.function("tenantd_billing_changed", { deterministic: false }, () => {
    version++;
    return null;
  });
  const watched = ["billing_plans", "billing_subscriptions", "family_members"];
  const triggers = watched.flatMap((table) =>
    ["INSERT", "UPDATE", "DELETE"].map(
      (op) => `CREATE TEMP TRIGGER IF NOT EXISTS tenantd_billing_${table}_${op.toLowerCase()} AFTER ${op} ON main.${table} BEGIN SELECT tenantd_billing_changed(); END;`,
    ),
  );
  triggers.push("CREATE TEMP TRIGGER IF NOT EXISTS tenantd_billing_owner_email AFTER UPDATE OF email ON main.tenants BEGIN SELECT tenantd_billing_changed(); END;");
  db.exec(triggers.join("\n"));
  return {
    version(now?: number): number {
      others.check(now);
      return version;
    },
  };
}
