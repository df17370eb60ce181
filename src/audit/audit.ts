import { createHmac } from "node:crypto";
import type { Core } from "../core.ts";
import type { AuditEntryRow } from "../db/types.ts";
import { newId } from "../crypto/random.ts";
import { currentRequestId } from "../log.ts";
import { toIso } from "../clock.ts";
import { enqueueEvent } from "../webhooks/events.ts";

/**
 * Who acted: a developer through the admin API or dashboard, a tenant, the operator (the CLI
 * or `backend.admin`, whoever runs them on the server), or tenantd itself (a job, a hook).
 */
export type AuditActorType = "developer" | "tenant" | "operator" | "system";

export interface AuditActor {
  type: AuditActorType;
  /** the developer's or tenant's id; null for the operator and the system */
  id?: string | null;
}

/** Where the action came from: the client's address and software, and the request. */
export interface AuditOrigin {
  ip?: string | null;
  client?: string | null;
  requestId?: string | null;
}

export interface AuditInput {
  appId: string;
  /** dotted, area first: `app.updated`, `tenant.signed_in` (docs/audit.md lists them) */
  action: string;
  /** the tenant the action concerns (their own activity lists it) */
  tenantId?: string | null;
  /** what else it concerns: a plan, a file, a key */
  target?: string | null;
  /** a few plain facts: never secrets, tokens or record contents */
  details?: Record<string, unknown>;
  actor?: AuditActor;
  origin?: AuditOrigin;
}

/** An entry as the API, the CLI and webhooks show it. */
export interface AuditEntry {
  id: string;
  seq: number;
  at: string;
  actor: { type: string; id: string | null };
  action: string;
  tenantId: string | null;
  target: string | null;
  ip: string | null;
  client: string | null;
  requestId: string | null;
  details: Record<string, unknown> | null;
  hash: string;
  prevHash: string;
}

const keys = new WeakMap<Core, Buffer>();

/**
 * The entry's hash: an HMAC under a key derived from the server key, over every field and
 * the previous entry's hash. Keyed, so rewriting a stretch of the trail and re-chaining it
 * needs the server key, not only write access to the database.
 */
export function sealEntry(core: Core, e: Omit<AuditEntryRow, "hash">): string {
  let key = keys.get(core);
  if (!key) keys.set(core, (key = core.secrets.deriveKey("audit-chain")));
  const fields = [e.appId, e.seq, e.id, e.at, e.actorType, e.actorId, e.action, e.tenantId, e.target, e.ip, e.client, e.requestId, e.details, e.prevHash];
  return createHmac("sha256", key).update(JSON.stringify(fields)).digest("hex");
}

const clip = (s: string | null | undefined, max: number) => (s == null ? null : s.length > max ? s.slice(0, max) : s);

/**
 * Records one action in the app's audit trail (docs/audit.md) and, when the app opted in,
 * queues it as an `audit.entry` webhook event. The request id defaults to the current
 * request's. Throws when the store does: an action the trail cannot record is not reported
 * as done.
 */
export async function audit(core: Core, input: AuditInput): Promise<AuditEntry> {
  const row = await core.db.audit.append(
    {
      appId: input.appId,
      id: newId("aud"),
      at: core.clock(),
      actorType: input.actor?.type ?? "system",
      actorId: input.actor?.id ?? null,
      action: input.action,
      tenantId: input.tenantId ?? null,
      target: clip(input.target, 200),
      ip: clip(input.origin?.ip, 64),
      client: clip(input.origin?.client, 256),
      requestId: input.origin?.requestId ?? currentRequestId() ?? null,
      details: input.details && Object.keys(input.details).length > 0 ? JSON.stringify(input.details) : null,
    },
    (e) => sealEntry(core, e),
  );
  const entry = toAuditEntry(row);
  const app = await core.db.apps.findById(input.appId);
  if (app?.settings.audit.webhook) {
    await enqueueEvent(core, { appId: app.id, event: "audit.entry", tenantId: entry.tenantId, email: null, payload: { entry } });
  }
  if (app) await core.hooks.emit("audit.recorded", { app, entry });
  return entry;
}

export function toAuditEntry(r: AuditEntryRow): AuditEntry {
  return {
    id: r.id,
    seq: r.seq,
    at: toIso(r.at)!,
    actor: { type: r.actorType, id: r.actorId },
    action: r.action,
    tenantId: r.tenantId,
    target: r.target,
    ip: r.ip,
    client: r.client,
    requestId: r.requestId,
    details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>),
    hash: r.hash,
    prevHash: r.prevHash,
  };
}

/** The operator: the CLI, or `backend.admin` in the embedding program. */
export const OPERATOR: AuditActor = { type: "operator" };
