import { hash } from "node:crypto";
import type { Core } from "../core.ts";
import { fail } from "../errors.ts";
import { hmacSha256 } from "../crypto/hmac.ts";
import { constantTimeEqual } from "../crypto/random.ts";
import { valueAtPath } from "../db/shared.ts";
import type { RecordRow } from "../db/types.ts";
import { isRanked, keyTargets, type Condition, type Json, type KeyTerm, type SortKey } from "./query.ts";

/**
 * List cursors (`after=`): where the next page starts, as the last record's place in the
 * list's total order (query.ts KeyTerm), so a page at any depth is an index range, not an
 * OFFSET walk. A cursor is base64url JSON, readable by the tenant it was issued to (it holds
 * only that tenant's own values), and signed with a key derived from the server key over the
 * app and tenant: one from another tenant, or altered, is refused. It names the query it
 * continues (collection, parsed filter and sort), so one sent with another query is refused
 * with a message saying so rather than answering a page of something else.
 *
 * A ranked list's (`$rank`) cursor holds only its position: a match's score is computed per
 * request, and on SQLite it moves with the words of every other record in the database (bm25
 * weighs words by how rare they are and documents by the average length), so no value of it
 * marks a place that later pages would still agree on. Such a page reads from its offset, as
 * offset paging does; scoring every match is the cost of any ranked page, deep or not.
 */

const macs = new WeakMap<Core, ReturnType<typeof hmacSha256>>();
function macOf(core: Core) {
  let mac = macs.get(core);
  if (!mac) macs.set(core, (mac = hmacSha256(core.secrets.deriveKey("list-cursor"))));
  return mac;
}

/** 128 bits of the MAC: a forger gets one guess per request. */
const MAC_CHARS = 22;
/** What a cursor may hold at most: its values come from one record's sort fields. */
export const MAX_CURSOR_CHARS = 8192;

interface Payload {
  /** the query's fingerprint */
  q: string;
  /** the last record's value per key term; none for a ranked list */
  v: Json[];
  /** how many records came before the next page (the page's `offset` as reported) */
  a: number;
}

/** The list a cursor belongs to: the collection and the parsed filter and sort (not their spelling). */
export function queryFingerprint(collection: string, conditions: readonly Condition[], sort: readonly SortKey[]): string {
  return hash("sha256", `${collection}\u0000${JSON.stringify(conditions)}\u0000${JSON.stringify(sort)}`, "base64url").slice(0, 16);
}

const signed = (core: Core, appId: string, tenantId: string, body: string) => macOf(core)(`${appId}\u0000${tenantId}\u0000${body}`, "base64url").slice(0, MAC_CHARS);

/** The cursor of the page after `last`; `at` records precede that page. */
export function encodeCursor(core: Core, appId: string, tenantId: string, query: string, sort: readonly SortKey[], last: RecordRow, at: number): string {
  const data = isRanked(sort) ? undefined : (JSON.parse(last.data) as unknown);
  const values = (data === undefined ? [] : keyTargets(sort)).map(({ target }): Json => {
    if (target.kind === "seq") return last.seq;
    if (target.kind === "field") return valueAtPath(data, target.path) ?? null;
    return target.column === "id" ? last.id : target.column === "created_at" ? last.createdAt : last.updatedAt;
  });
  const body = Buffer.from(JSON.stringify({ q: query, v: values, a: at } satisfies Payload)).toString("base64url");
  return `${body}.${signed(core, appId, tenantId, body)}`;
}

const notOurs = () =>
  fail("invalid_cursor", "after is not a cursor this server issued for you: send the `next` value of the previous page unchanged, or leave after out to start from the first page.");

/** The start of the page a cursor points at (`terms` empty for a ranked list: it starts at `at`); 400 invalid_cursor when it is not one for this query. */
export function decodeCursor(core: Core, appId: string, tenantId: string, query: string, sort: readonly SortKey[], cursor: string): { terms: KeyTerm[]; at: number } {
  const dot = cursor.indexOf(".");
  if (cursor.length > MAX_CURSOR_CHARS || dot < 0) throw notOurs();
  const body = cursor.slice(0, dot);
  if (!constantTimeEqual(cursor.slice(dot + 1), signed(core, appId, tenantId, body))) throw notOurs();
  const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Payload;
  if (payload.q !== query) {
    throw fail(
      "invalid_cursor",
      "This cursor belongs to another list: the collection, filter or sort differ from the query whose page gave it. Send the same filter and sort with after (only limit may change), or leave after out to start again.",
    );
  }
  const targets = isRanked(sort) ? [] : keyTargets(sort);
  const terms = targets.map(({ target, dir }, i) => ({ target, dir, value: payload.v[i] ?? null }) as KeyTerm);
  return { terms, at: payload.a };
}
