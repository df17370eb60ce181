import * as v from "valibot";
import { QuotasSchema } from "../account/quotas-schema.ts";
import { MFA_AUTH_SETTINGS } from "../auth/mfa/settings-schema.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { isPlainObject, type JsonObject } from "../tools/merge-patch.ts";
import { SIGN_IN_SETTINGS } from "../auth/sign-in-settings.ts";
import { OrgSettingsSchema } from "../orgs/settings-schema.ts";

export const OAUTH_PROVIDERS = ["google", "github", "apple", "microsoft", "facebook", "discord", "twitter"] as const;
/** The built-in providers and `oidc`: any OpenID Connect issuer the app names. */
export const SIGN_IN_PROVIDERS = [...OAUTH_PROVIDERS, "oidc"] as const;
export type OAuthProviderName = (typeof SIGN_IN_PROVIDERS)[number];

export const COLLECTION_NAME = /^[A-Za-z0-9]{1,64}$/;
/** A field inside a record's `data`: dotted path of identifier-like segments. */
export const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_-]{0,63}(\.[A-Za-z_][A-Za-z0-9_-]{0,63}){0,7}$/;

/** Indexed plus unique fields of one app, over all its collections. */
export const MAX_INDEXED_FIELDS = 32;

const origin = v.pipe(
  v.string(),
  v.check((s) => s === "*" || /^https?:\/\/[^/\s?#]+$/.test(s), "must be an origin like https://app.example.com (scheme and host, no path) or \"*\""),
);
const httpUrl = v.pipe(v.string(), v.url(), v.check((s) => /^https?:\/\//.test(s), "must be an http(s) URL"));
const linkTemplate = v.pipe(httpUrl, v.check((s) => s.includes("{token}"), "must contain {token}"));
const entitlementValue = v.union([v.boolean(), v.pipe(v.number(), v.minValue(0))]);
const secret = v.pipe(v.string(), v.minLength(1));

const OAuthProviderSettings = v.strictObject({
  enabled: v.optional(v.boolean(), true),
  clientId: v.pipe(v.string(), v.minLength(1)),
  clientSecret: v.optional(secret),
  /** Microsoft Entra tenant (`common`, `organizations`, `consumers` or a tenant id). */
  tenant: v.optional(v.string()),
  /** Apple: team id, key id and the PKCS#8 private key (PEM) used to sign the client secret. */
  teamId: v.optional(v.string()),
  keyId: v.optional(v.string()),
  privateKey: v.optional(secret),
  /** Replaces the scopes tenantd asks for (docs/oauth.md lists the defaults). */
  scopes: v.optional(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(200)))),
  /** oidc: the issuer, whose /.well-known/openid-configuration is read. */
  issuer: v.optional(v.pipe(v.string(), v.url(), v.check((s) => s.startsWith("https://"), "must be an https URL"))),
  /** oidc: when its emails count as verified: on the id token's email_verified claim (default), always, or never. */
  trustEmail: v.optional(v.picklist(["claim", "always", "never"])),
});

/** Every per-app setting, with its default. Areas read their own section. */
export const AppSettingsSchema = v.strictObject({
  corsOrigins: v.optional(v.array(origin), []),
  signupMode: v.optional(v.picklist(["open", "invite_only", "closed"]), "open"),
  collections: v.optional(
    v.pipe(
    v.record(
      v.pipe(v.string(), v.regex(COLLECTION_NAME, "collection names are 1-64 letters or digits")),
      v.strictObject({
        unique: v.optional(v.array(v.pipe(v.string(), v.regex(FIELD_PATH, "must be a field path like name or address.city"))), []),
        indexed: v.optional(v.array(v.pipe(v.string(), v.regex(FIELD_PATH, "must be a field path like name or address.city"))), []),
        /** Full-text search ($text) on; `language` picks the common words left out (src/data/text.ts SEARCH_LANGUAGES). */
        search: v.optional(v.strictObject({ language: v.optional(v.picklist(["simple", "en", "es", "nl"], "must be simple, en, es or nl"), "simple") })),
        /**
         * Organization records (docs/organizations.md#organization-records): the collection's
         * records belong to organizations. `true` is `{ write: "records.write" }`; `"members"`
         * lets every member write.
         */
        org: v.optional(
          v.union(
            [v.literal(true), v.strictObject({ write: v.optional(v.picklist(["records.write", "members"], 'must be "records.write" or "members"'), "records.write") })],
            'must be true or { "write": "records.write" | "members" }',
          ),
        ),
      }),
    ),
      // Every indexed or unique field is an index on the shared records table: each one
      // costs every insert of every app, and building one holds the write lock.
      v.check(
        (c) => Object.values(c).reduce((n, x) => n + new Set([...(x.unique ?? []), ...(x.indexed ?? [])]).size, 0) <= MAX_INDEXED_FIELDS,
        `at most ${MAX_INDEXED_FIELDS} indexed and unique fields per app, over all collections`,
      ),
    ),
    {},
  ),
  email: v.optional(
    v.strictObject({
      /** false: the app delivers its own emails (tenantd sends none; webhooks carry the links). */
      sendEmail: v.optional(v.boolean(), true),
      from: v.optional(v.string()),
      appName: v.optional(v.string()),
      verifyUrl: v.optional(linkTemplate),
      resetUrl: v.optional(linkTemplate),
    }),
    {},
  ),
  oauth: v.optional(
    v.strictObject({
      redirectUrls: v.optional(v.array(httpUrl), []),
      providers: v.optional(v.record(v.picklist(SIGN_IN_PROVIDERS), OAuthProviderSettings), {}),
    }),
    {},
  ),
  billing: v.optional(
    v.strictObject({
      stripeSecretKey: v.optional(secret),
      stripeWebhookSecret: v.optional(secret),
      defaultEntitlements: v.optional(v.record(v.string(), entitlementValue), {}),
      trial: v.optional(v.strictObject({ planId: v.string(), days: v.pipe(v.number(), v.integer(), v.minValue(1)) })),
    }),
    {},
  ),
  invites: v.optional(v.strictObject({ defaultQuota: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 5) }), {}),
  quotas: v.optional(QuotasSchema, {}),
  auth: v.optional(v.strictObject({ ...MFA_AUTH_SETTINGS, ...SIGN_IN_SETTINGS }), {}),
  audit: v.optional(
    v.strictObject({
      /** Entries older than this are dropped by the hourly housekeeping (docs/audit.md). */
      retentionDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(36500)), 365),
      /** Sends each entry as an `audit.entry` webhook event. */
      webhook: v.optional(v.boolean(), false),
    }),
    {},
  ),
  /** Organizations: custom roles and seats (docs/organizations.md). */
  orgs: v.optional(OrgSettingsSchema, {}),
});

export type AppSettings = v.InferOutput<typeof AppSettingsSchema>;

/** Setting paths holding secrets: stored sealed, never shown back. `*` matches any key. */
const SECRET_PATHS = [
  ["billing", "stripeSecretKey"],
  ["billing", "stripeWebhookSecret"],
  ["oauth", "providers", "*", "clientSecret"],
  ["oauth", "providers", "*", "privateKey"],
];

function mapSecrets(settings: JsonObject, fn: (value: string) => unknown): JsonObject {
  const copy = structuredClone(settings);
  const walk = (node: unknown, path: string[]) => {
    if (!isPlainObject(node)) return;
    const [head, ...rest] = path;
    const keys = head === "*" ? Object.keys(node) : [head!];
    for (const k of keys) {
      if (!(k in node)) continue;
      if (rest.length === 0) {
        if (typeof node[k] === "string") {
          const next = fn(node[k]);
          if (next === undefined) delete node[k];
          else node[k] = next;
        }
      } else walk(node[k], rest);
    }
  };
  for (const p of SECRET_PATHS) walk(copy, p);
  return copy;
}

/**
 * Seals any secret that is still plaintext (a freshly set value), bound to the app id as
 * associated data so a sealed value copied into another app's row does not open. A value
 * already sealed is kept; one in the older unbound `enc:v1:` form is re-sealed bound (every
 * write upgrades the row). Only the app's own stored settings may carry sealed values: the
 * caller refuses sealed input first (refuseSealedInput).
 */
export function sealSettings(settings: JsonObject, box: SecretBox, appId: string): JsonObject {
  return mapSecrets(settings, (s) => (!box.isSealed(s) ? box.seal(s, appId) : s.startsWith(UNBOUND) ? box.seal(box.open(s), appId) : s));
}

const UNBOUND = "enc:v1:";

/** Opens an app-settings secret: bound to the app id, or (written before binding) unbound. */
export function openAppSecret(box: SecretBox, sealed: string, appId: string): string {
  return sealed.startsWith(UNBOUND) ? box.open(sealed) : box.open(sealed, appId);
}

/**
 * A settings value that already looks sealed can only come from another row (another app,
 * a backup): refused, so it is neither trusted as this app's secret nor opened for it.
 */
export function sealedInputPath(input: unknown, box: SecretBox): string | undefined {
  let found: string | undefined;
  const walk = (node: unknown, path: string[], at: string[]) => {
    if (found || !isPlainObject(node)) return;
    const [head, ...rest] = path;
    for (const k of head === "*" ? Object.keys(node) : [head!]) {
      if (!(k in node)) continue;
      if (rest.length === 0) {
        if (box.isSealed(node[k])) found ??= ["settings", ...at, k].join(".");
      } else walk(node[k], rest, [...at, k]);
    }
  };
  for (const p of SECRET_PATHS) walk(input, p, []);
  return found;
}

export const REDACTED = "[encrypted]";

/** A patch that echoes back the redaction marker keeps the stored secret. */
export function dropRedactedSecrets(patch: JsonObject): JsonObject {
  return mapSecrets(patch, (s) => (s === REDACTED ? undefined : s));
}

/** What a developer sees: secrets replaced by a marker saying one is set. */
export function redactSettings(settings: JsonObject): JsonObject {
  return mapSecrets(settings, () => REDACTED);
}

export function readSettings(raw: unknown): AppSettings {
  return v.parse(AppSettingsSchema, raw ?? {});
}
