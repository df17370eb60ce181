import * as v from "valibot";
import { toIso } from "../clock.ts";
import type { InviteRow } from "../db/types.ts";
import { hashToken, newId, newToken } from "../crypto/random.ts";

const DAY_SECONDS = 24 * 3600;
/** One rule for every `expiresInSeconds` (share links, invite tokens, family invites): at least 1. */
export const MIN_INVITE_SECONDS = 1;
export const MAX_INVITE_SECONDS = 365 * DAY_SECONDS;
/** How long an invite lives when the body names no `expiresInSeconds`. */
export const DEFAULT_INVITE_SECONDS = { invite: 30 * DAY_SECONDS, family: 7 * DAY_SECONDS } as const;

/** v.object lets a JSON array through when every field is optional; a body here must be an object. */
export const bodyObject = <E extends v.ObjectEntries>(entries: E) =>
  v.pipe(
    v.unknown(),
    v.check((x) => typeof x === "object" && x !== null && !Array.isArray(x), "must be a JSON object"),
    v.object(entries),
  );

/** The create body shared by invite tokens and family invites. */
export const CreateInviteBody = bodyObject({
  note: v.optional(v.pipe(v.string(), v.maxLength(500, "must be at most 500 characters"))),
  expiresInSeconds: v.optional(
    v.pipe(
      v.number("must be a number of seconds"),
      v.integer("must be a whole number of seconds"),
      v.minValue(MIN_INVITE_SECONDS, `must be at least ${MIN_INVITE_SECONDS}`),
      v.maxValue(MAX_INVITE_SECONDS, `must be at most ${MAX_INVITE_SECONDS} (365 days)`),
    ),
  ),
});
export type CreateInviteInput = v.InferOutput<typeof CreateInviteBody>;

export type InviteStatus = "pending" | "used" | "expired";

/** The public view of an invite token or family invite. The plaintext token is never stored, so never listed. */
export function toPublicInvite(row: InviteRow, now: number) {
  const status: InviteStatus = row.usedAt !== null ? "used" : row.expiresAt <= now ? "expired" : "pending";
  return {
    id: row.id,
    note: row.note,
    status,
    createdAt: toIso(row.createdAt)!,
    expiresAt: toIso(row.expiresAt)!,
    usedAt: toIso(row.usedAt),
    usedByTenantId: row.usedByTenantId,
  };
}
export type PublicInvite = ReturnType<typeof toPublicInvite>;

/** An entitlement read as a limit: a number caps, `true` is unlimited (null), `false` is 0. */
export function entitlementLimit(value: boolean | number | undefined, fallback: number): number | null {
  if (value === true) return null;
  if (value === false) return 0;
  return typeof value === "number" ? Math.floor(value) : fallback;
}

/** A fresh invite row and its plaintext token (`inv_…` or `fam_…`), which only the reply carries. */
export function newInvite(kind: "invite" | "family", appId: string, tenantId: string, input: CreateInviteInput, now: number): { row: InviteRow; token: string } {
  const token = newToken(kind === "invite" ? "inv" : "fam");
  const seconds = input.expiresInSeconds ?? DEFAULT_INVITE_SECONDS[kind];
  return {
    token,
    row: {
      id: newId(kind === "invite" ? "inv" : "fin"),
      appId,
      tenantId,
      tokenHash: hashToken(token),
      note: input.note ?? null,
      createdAt: now,
      expiresAt: now + seconds * 1000,
      usedAt: null,
      usedByTenantId: null,
    },
  };
}
