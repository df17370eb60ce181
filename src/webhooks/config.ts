import { isIP } from "node:net";
import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow, WebhookConfigRow } from "../db/types.ts";
import { newToken } from "../crypto/random.ts";
import { toIso } from "../clock.ts";
import { fail } from "../errors.ts";
import { refusedAddressReason } from "./address-guard.ts";

export const WebhookUrlBody = v.object({
  url: v.pipe(v.string("url must be a string"), v.trim(), v.maxLength(2048, "url is at most 2048 characters"), v.url("url must be an absolute URL like https://api.example.com/webhooks")),
});

/** What the developer sees; `secret` only in the answers that create one. */
export interface PublicWebhookConfig {
  url: string | null;
  secretCreatedAt: string | null;
  createdAt: string | null;
  updatedAt: string | null;
}

export const toPublicWebhookConfig = (c: WebhookConfigRow | undefined): PublicWebhookConfig => ({
  url: c?.url ?? null,
  secretCreatedAt: toIso(c?.secretCreatedAt),
  createdAt: toIso(c?.createdAt),
  updatedAt: toIso(c?.updatedAt),
});

/** HTTPS only (http too with `webhooks.allowInsecure`), no credentials in the URL, no internal IP literal. */
export function checkWebhookUrl(core: Core, raw: string): string {
  const url = new URL(raw);
  const insecure = core.config.webhooks.allowInsecure;
  if (url.protocol !== "https:" && !(insecure && url.protocol === "http:")) {
    throw fail("invalid_request", `url must use https:// (got ${url.protocol}//). Plain http (and loopback or private targets) is for development only: set the webhooks.allowInsecure option, or TENANTD_WEBHOOKS_ALLOW_INSECURE=1 for the CLI and for tenantd serve.`);
  }
  if (url.username || url.password) {
    throw fail("invalid_request", "url must not contain a user name or password: it is shown back in the config; authenticate deliveries by their signature.");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const reason = !insecure && isIP(host) ? refusedAddressReason(host) : null;
  if (reason) throw fail("invalid_request", `url points at a ${reason} address; webhooks go to public addresses only (for local development: TENANTD_WEBHOOKS_ALLOW_INSECURE=1 on the CLI and on tenantd serve).`);
  url.hash = "";
  return url.toString();
}

const newSecret = () => newToken("whsec");

/** Sets the endpoint. The first set creates the signing secret and returns it (once); later sets keep it. */
export async function setWebhookUrl(core: Core, app: AppRow, rawUrl: string): Promise<PublicWebhookConfig & { secret: string | null }> {
  const url = checkWebhookUrl(core, rawUrl);
  const secret = newSecret();
  const created = await core.db.webhooks.setUrl(app.id, url, core.secrets.seal(secret, app.id), core.clock());
  return { ...toPublicWebhookConfig(await core.db.webhooks.findConfig(app.id)), secret: created ? secret : null };
}

/** A new signing secret, returned once; the old one signs nothing from now on. */
export async function rotateWebhookSecret(core: Core, app: AppRow): Promise<PublicWebhookConfig & { secret: string }> {
  const secret = newSecret();
  if (!(await core.db.webhooks.setSecret(app.id, core.secrets.seal(secret, app.id), core.clock()))) {
    throw fail("not_found", "This app has no webhook URL yet: set one with PUT …/event-webhook-config first.");
  }
  return { ...toPublicWebhookConfig(await core.db.webhooks.findConfig(app.id)), secret };
}

export async function getWebhookConfig(core: Core, app: AppRow): Promise<PublicWebhookConfig> {
  return toPublicWebhookConfig(await core.db.webhooks.findConfig(app.id));
}

/** Removes the endpoint and its secret; events that fire afterwards are logged `invalid_config`. */
export async function removeWebhookConfig(core: Core, app: AppRow): Promise<void> {
  await core.db.webhooks.removeConfig(app.id);
}
