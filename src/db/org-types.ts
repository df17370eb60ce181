// Rows of organizations (src/orgs), kept apart from types.ts: one area's shapes in one place.

/** "team" for organizations tenants create; "family" is the preset family plans move to. */
export type OrgKind = "team" | "family";

export interface OrgRow {
  id: string;
  appId: string;
  name: string;
  kind: OrgKind;
  createdAt: number;
  updatedAt: number;
}

/** An organization as one member sees it: with that member's role. */
export interface MemberOrgRow extends OrgRow {
  role: string;
}

export interface OrgMemberRow {
  tenantId: string;
  email: string;
  role: string;
  joinedAt: number;
}

/** Where a members page starts: after this member in (joinedAt, tenantId) order. */
export interface MemberCursor {
  joinedAt: number;
  tenantId: string;
}

export interface OrgInviteRow {
  id: string;
  orgId: string;
  appId: string;
  createdBy: string | null;
  /** null for a link invite: anyone holding it joins until it expires or is revoked */
  email: string | null;
  role: string;
  tokenHash: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedByTenantId: string | null;
  uses: number;
}

export interface OrgSeatCounts {
  members: number;
  /** email invites not yet used nor expired: each holds a seat */
  pending: number;
}

export type OrgJoinOutcome =
  | { kind: "joined"; orgId: string; role: string }
  | { kind: "invalid" | "full" | "already_member" | "wrong_email" };

/**
 * A role change or removal that would leave the organization without an owner is refused;
 * `stale` when a role it was decided on (the actor's, the target's) changed meanwhile.
 */
export type MemberChange = "changed" | "not_found" | "last_owner" | "stale";

/** A member's role as the caller read it: the change happens only while it still holds. */
export interface RoleCheck {
  tenantId: string;
  role: string;
}
