import { fail } from "../errors.ts";
import type { JoinOutcome } from "../db/types.ts";

/** The error for a join that did not happen, shared by consume, sign-up and replace-with-family. */
export function joinFailure(outcome: Exclude<JoinOutcome, { kind: "joined" }>) {
  switch (outcome.kind) {
    case "invalid":
      return fail("invalid_token", "This family invite is unknown, already used, revoked or expired. Ask the owner for a new one.");
    case "full":
      return fail("seats_full", "Every seat of this family is taken. Ask the owner to free a seat or upgrade the plan.");
    case "own_invite":
      return fail("conflict", "This is your own family invite: give it to the person you want to invite.");
    case "already_member":
      return fail("conflict", "You are already in a family. Leave it first (POST /api/v1/tenants/me/family/leave).");
    case "has_members":
      return fail("conflict", "You own a family with members: remove them before joining another family.");
  }
}

/** Throws unless the outcome is a join; returns the owner. */
export function requireJoined(outcome: JoinOutcome): string {
  if (outcome.kind !== "joined") throw joinFailure(outcome);
  return outcome.ownerTenantId;
}
