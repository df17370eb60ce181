import type { AppRow, TenantRow } from "./db/types.ts";
import type { OAuthProviderName } from "./apps/settings.ts";
import type { AuditEntry } from "./audit/audit.ts";

/**
 * Events one area raises for others (files removes blobs when a tenant goes, billing starts
 * a trial when a tenant signs up, …). Handlers run in registration order and are awaited.
 * Each area adds the events it raises here.
 */
export interface HookEvents {
  "app.settingsChanged": { app: AppRow };
  "app.deleting": { app: AppRow };
  /** `provider` is set when the tenant signed up through social login (its emailVerifiedAt may already be set). */
  "tenant.created": { app: AppRow; tenant: TenantRow; inviteToken?: string; sendEmail: boolean; provider?: OAuthProviderName };
  /** Before the tenant's rows are deleted (blobs, external subscriptions). */
  "tenant.deleting": { app: AppRow; tenantId: string };
  /** The developer asked to resend a verification email for an app that delivers its own email. */
  "tenant.verificationResent": { app: AppRow; tenant: TenantRow; verifyToken: string; verifyUrl: string; expiresAt: number };
  /** After the tenant's rows are gone. */
  "tenant.deleted": { app: AppRow; tenantId: string; email: string; locale: string; reason: "self_delete" | "admin_delete" | "anonymous_idle" };
  /** A client's wrong passwords on an account just reached the count where it must wait (`account` as login-backoff.ts keys it). */
  "signIn.backoffStarted": { account: string; client: string; failures: number };
  /** An entry was added to the app's audit trail (src/audit). */
  "audit.recorded": { app: AppRow; entry: AuditEntry };
  /** A billing provider created or changed the tenant's subscription. */
  "billing.subscriptionChanged": { app: AppRow; tenantId: string; planId: string; status: string; provider: "stripe" | "dev" };
}

type Handler<K extends keyof HookEvents> = (payload: HookEvents[K]) => unknown;

export interface Hooks {
  on<K extends keyof HookEvents>(name: K, handler: Handler<K>): void;
  emit<K extends keyof HookEvents>(name: K, payload: HookEvents[K]): Promise<void>;
}

export function createHooks(): Hooks {
  const handlers = new Map<string, Handler<never>[]>();
  return {
    on(name, handler) {
      const list = handlers.get(name) ?? [];
      list.push(handler as Handler<never>);
      handlers.set(name, list);
    },
    async emit(name, payload) {
      for (const h of handlers.get(name) ?? []) await (h as Handler<typeof name>)(payload);
    },
  };
}
