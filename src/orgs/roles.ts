import type { AppRow } from "../db/types.ts";
import type { MemberOrgRow } from "../db/org-types.ts";
import { fail } from "../errors.ts";
import { BUILT_IN_ROLES, ORG_PERMISSIONS, type OrgPermission } from "./settings-schema.ts";

const BUILT_IN: Record<string, readonly OrgPermission[]> = {
  owner: ORG_PERMISSIONS,
  admin: ORG_PERMISSIONS,
  member: ["records.read"],
};

/**
 * What a role may do. A custom role the developer has since removed from the settings keeps
 * its members but grants nothing until it is defined again or they get another role.
 */
export function permissionsOf(app: AppRow, role: string): ReadonlySet<OrgPermission> {
  return new Set(BUILT_IN[role] ?? app.settings.orgs.roles[role]?.permissions ?? []);
}

export function requireKnownRole(app: AppRow, role: string): void {
  if ((BUILT_IN_ROLES as readonly string[]).includes(role) || role in app.settings.orgs.roles) return;
  const custom = Object.keys(app.settings.orgs.roles);
  throw fail("invalid_request", `Unknown role "${role}": use owner, admin, member${custom.length ? " or one of this app's roles: " + custom.join(", ") : ""}.`);
}

export function requirePermission(app: AppRow, org: MemberOrgRow, permission: OrgPermission): void {
  if (!permissionsOf(app, org.role).has(permission)) {
    throw fail("forbidden", `Your role in this organization (${org.role}) does not allow this: it needs the ${permission} permission.`);
  }
}

export function requireOwnerRole(org: MemberOrgRow, what: string): void {
  if (org.role !== "owner") throw fail("forbidden", `Only an owner can ${what}; your role in this organization is ${org.role}.`);
}

/**
 * Whether `actor` may act on a member of role `target` or hand out `target`: owners may do
 * anything; nobody else touches owners, nor a role that can do something they cannot.
 */
export function outranks(app: AppRow, actor: string, target: string): boolean {
  if (actor === "owner") return true;
  if (target === "owner") return false;
  const mine = permissionsOf(app, actor);
  return [...permissionsOf(app, target)].every((p) => mine.has(p));
}

export function requireOutranks(app: AppRow, org: MemberOrgRow, target: string, what: string): void {
  if (!outranks(app, org.role, target)) {
    throw fail("forbidden", `Your role (${org.role}) cannot ${what} a member whose role is ${target}: only a role that can do everything ${target} can may do that${target === "owner" ? " (for owners: only an owner)" : ""}.`);
  }
}
