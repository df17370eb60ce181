import type { Core } from "../core.ts";
import type { TenantAuth } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { hashToken, newId, newToken } from "../crypto/random.ts";
import { toIso } from "../clock.ts";
import { recordScope, toPublicRecord, type PublicRecord } from "./records.ts";

/** The longest a share link may live when it expires at all: 365 days. */
export const MAX_SHARE_SECONDS = 365 * 24 * 60 * 60;
/** Share links a record may have at once (expired ones do not count): each is a row, and a tenant could otherwise add them without end. */
export const MAX_SHARE_LINKS = 100;

export interface PublicShareToken {
  id: string;
  token: string;
  expiresAt: string | null;
  createdAt: string;
}

/** A new share link; the token is shown once and only its hash is stored. */
export async function createShareLink(core: Core, auth: TenantAuth, collection: string, recordId: string, expiresInSeconds?: number): Promise<PublicShareToken> {
  const { scope } = recordScope(auth, collection);
  const now = core.clock();
  const token = newToken("shr");
  const link = { id: newId("share"), createdAt: now, expiresAt: expiresInSeconds === undefined ? null : now + expiresInSeconds * 1000 };
  const made = await core.db.records.createShareLink(scope, recordId, link, hashToken(token), MAX_SHARE_LINKS);
  if (!made) throw fail("not_found", `No record ${recordId.slice(0, 80)} in collection ${collection}.`);
  if (made === "full") {
    throw fail(
      "limit_reached",
      `Record ${recordId.slice(0, 80)} already has ${MAX_SHARE_LINKS} share links, the most a record may have: revoke them (DELETE /api/v1/data/${collection}/${recordId.slice(0, 80)}/share) or let some expire, then create a new one.`,
    );
  }
  return { id: link.id, token, expiresAt: toIso(link.expiresAt), createdAt: toIso(now)! };
}

/** Revokes every share link of the record at once. */
export async function revokeShareLinks(core: Core, auth: TenantAuth, collection: string, recordId: string): Promise<{ revoked: number }> {
  const { scope } = recordScope(auth, collection);
  const revoked = await core.db.records.revokeShareLinks(scope, recordId);
  if (revoked === undefined) throw fail("not_found", `No record ${recordId.slice(0, 80)} in collection ${collection}.`);
  return { revoked };
}

/** The public read: unknown, revoked or orphaned links are 404, expired ones 410. */
export async function readShared(core: Core, token: string): Promise<{ record: PublicRecord }> {
  const found = token.length <= 200 ? await core.db.records.findShared(hashToken(token)) : undefined;
  if (!found) throw fail("not_found", "This share link does not exist or has been revoked.");
  if (found.expiresAt !== null && found.expiresAt <= core.clock()) throw fail("gone", "This share link has expired. Ask the owner for a new one.");
  return { record: toPublicRecord(found.record) };
}
