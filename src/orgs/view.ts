import { toIso } from "../clock.ts";
import type { MemberOrgRow, OrgMemberRow } from "../db/org-types.ts";
import { fail } from "../errors.ts";

export function toPublicOrg(o: MemberOrgRow) {
  return { id: o.id, name: o.name, kind: o.kind, role: o.role, createdAt: toIso(o.createdAt)!, updatedAt: toIso(o.updatedAt)! };
}

export function toPublicMember(m: OrgMemberRow) {
  return { tenantId: m.tenantId, email: m.email, role: m.role, joinedAt: toIso(m.joinedAt)! };
}

/** A members page's `next`: the last member's place in join order, as base64url JSON. */
export function memberCursor(m: OrgMemberRow): string {
  return Buffer.from(JSON.stringify([m.joinedAt, m.tenantId])).toString("base64url");
}

export function readMemberCursor(after: string): { joinedAt: number; tenantId: string } {
  try {
    const [joinedAt, tenantId] = JSON.parse(Buffer.from(after, "base64url").toString("utf8")) as unknown[];
    if (Number.isSafeInteger(joinedAt) && typeof tenantId === "string" && tenantId.length <= 100) return { joinedAt: joinedAt as number, tenantId };
  } catch {
    // falls through to the refusal
  }
  throw fail("invalid_cursor", "after is not a members cursor: send the `next` of the previous page unchanged, or leave after out to start from the first page.");
}
