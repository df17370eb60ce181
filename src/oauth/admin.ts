import type { Core } from "../core.ts";
import type { AppSettings, OAuthProviderName } from "../apps/settings.ts";
import { SIGN_IN_PROVIDERS } from "../apps/settings.ts";
import { requireAppRef, updateApp } from "../apps/service.ts";
import { fail } from "../errors.ts";
import type { JsonObject } from "../tools/merge-patch.ts";
import { callbackUrl, PROVIDERS } from "./providers.ts";

export interface ProviderChange {
  enabled?: boolean;
  clientId?: string;
  clientSecret?: string;
  tenant?: string;
  teamId?: string;
  keyId?: string;
  privateKey?: string;
  scopes?: string[];
  issuer?: string;
  trustEmail?: "claim" | "always" | "never";
}

export interface ProviderSummary {
  provider: OAuthProviderName;
  enabled: boolean;
  configured: boolean;
  clientId: string | null;
  clientSecretSet: boolean;
  tenant: string | null;
  teamId: string | null;
  keyId: string | null;
  privateKeySet: boolean;
  scopes: string[];
  callbackUrl: string;
  /** oidc: the issuer and when its emails count as verified */
  issuer: string | null;
  trustEmail: "claim" | "always" | "never" | null;
}

export function asProvider(name: string): OAuthProviderName {
  if (!(SIGN_IN_PROVIDERS as readonly string[]).includes(name)) throw fail("invalid_request", `Unknown provider "${name}". Known: ${SIGN_IN_PROVIDERS.join(", ")}.`);
  return name as OAuthProviderName;
}

/** Sets one provider's fields (a merge: fields not given keep their value). Secrets are sealed by the settings layer. */
export async function setProvider(core: Core, appRef: string, provider: OAuthProviderName, change: ProviderChange): Promise<ProviderSummary[]> {
  const app = await requireAppRef(core, appRef);
  const current = app.settings.oauth.providers[provider];
  if (!current && !change.clientId) throw fail("invalid_request", `${provider} is not set up for this app yet: give its client id.`);
  const patch = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) as JsonObject;
  const next = await updateApp(core, app, { settings: { oauth: { providers: { [provider]: patch } } } });
  return summarize(core, next.settings.oauth.providers, [provider]);
}

/** Replaces, adds to or removes from the redirect allow-list. */
export async function setRedirectUrls(core: Core, appRef: string, change: { set?: string[]; add?: string[]; remove?: string[] }): Promise<string[]> {
  const app = await requireAppRef(core, appRef);
  let urls = change.set ?? app.settings.oauth.redirectUrls;
  urls = [...new Set([...urls, ...(change.add ?? [])])].filter((u) => !(change.remove ?? []).includes(u));
  const next = await updateApp(core, app, { settings: { oauth: { redirectUrls: urls } } });
  return next.settings.oauth.redirectUrls;
}

export async function listProviders(core: Core, appRef: string): Promise<{ appId: string; redirectUrls: string[]; providers: ProviderSummary[] }> {
  const app = await requireAppRef(core, appRef);
  return { appId: app.id, redirectUrls: app.settings.oauth.redirectUrls, providers: summarize(core, app.settings.oauth.providers, SIGN_IN_PROVIDERS) };
}

function summarize(core: Core, settings: AppSettings["oauth"]["providers"], names: readonly OAuthProviderName[]): ProviderSummary[] {
  return names.map((provider) => {
    const s = settings[provider];
    return {
      provider,
      enabled: s?.enabled ?? false,
      configured: !!s?.clientId && PROVIDERS[provider].needs.every((k) => !!s[k]),
      clientId: s?.clientId ?? null,
      clientSecretSet: !!s?.clientSecret,
      tenant: provider === "microsoft" ? (s?.tenant ?? "common") : null,
      teamId: s?.teamId ?? null,
      keyId: s?.keyId ?? null,
      privateKeySet: !!s?.privateKey,
      scopes: s?.scopes ?? PROVIDERS[provider].scopes,
      callbackUrl: callbackUrl(core, provider),
      issuer: s?.issuer ?? null,
      trustEmail: provider === "oidc" ? (s?.trustEmail ?? "claim") : null,
    };
  });
}
