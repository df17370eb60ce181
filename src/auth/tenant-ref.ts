import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { fail } from "../errors.ts";

/**
 * A tenant of this app named by id or email, as the developer's actions (admin API, CLI)
 * accept it; another app's tenant is not found.
 */
export async function requireTenantRef(core: Core, app: AppRow, ref: string): Promise<TenantRow> {
  const tenant = (await core.db.tenants.findById(app.id, ref)) ?? (ref.includes("@") ? await core.db.tenants.findByEmail(app.id, ref.trim().toLowerCase()) : undefined);
  // An organization's data owner row (its email is its id, src/orgs/records.ts) is no tenant.
  if (!tenant || tenant.email === tenant.id) throw fail("not_found", `No tenant with id or email "${ref.slice(0, 120)}" in app ${app.name}.`);
  return tenant;
}
