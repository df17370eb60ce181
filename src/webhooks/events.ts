import type { Core } from "../core.ts";
import { newId } from "../crypto/random.ts";

/** Event names tenantd sends. Receivers must ignore names they do not know. */
export type WebhookEventName = "tenant.deleted" | "tenant.email.resend_verification" | "webhook.test" | "tenant.security" | "audit.entry" | OrgEventName;

/** Organization changes (docs/organizations.md); each is also an audit action of the same name. */
export type OrgEventName =
  | "org.created"
  | "org.updated"
  | "org.deleted"
  | "org.ownership_transferred"
  | "org.member.added"
  | "org.member.removed"
  | "org.member.role_changed"
  | "org.invite.created"
  | "org.invite.revoked"
  | "org.subscription.updated";

export interface NewEvent {
  appId: string;
  event: WebhookEventName;
  tenantId: string | null;
  email: string | null;
  payload: Record<string, unknown>;
}

type Listener = (core: Core) => void;
const listeners = new WeakMap<Core, Listener>();

/** The server's dispatcher asks to be told when an event is queued in this process. */
export function onEventQueued(core: Core, fn: Listener | undefined): void {
  if (fn) listeners.set(core, fn);
  else listeners.delete(core);
}

/**
 * Puts the event on the SQLite queue. The email and payload are sealed (a verification
 * token must not sit in plain text). Nothing is sent here: the dispatcher picks the event
 * up after the current request has answered (in the CLI, the next server to run does).
 */
export async function enqueueEvent(core: Core, e: NewEvent): Promise<void> {
  await core.db.webhooks.enqueue({
    id: newId("evt"),
    appId: e.appId,
    event: e.event,
    tenantId: e.tenantId,
    data: core.secrets.seal(JSON.stringify({ email: e.email, payload: e.payload })),
    createdAt: core.clock(),
  });
  listeners.get(core)?.(core);
}
