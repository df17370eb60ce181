/**
 * What `tenantd store copy` moves: every table both engines hold, in an order where a row's
 * foreign keys point at rows already copied, with each column's kind (how values convert
 * between SQLite's integers and PostgreSQL's BIGINT/BOOLEAN). test/store-copy.test.ts
 * checks this list against both live schemas, so a table or column added by a migration
 * fails the test until it is listed here (or in NOT_COPIED with the reason).
 */

export type ColumnKind = "text" | "int" | "bool";

export interface CopyTable {
  name: string;
  columns: Record<string, ColumnKind>;
  /** Unique, never-null columns the copy pages by (keyset: `WHERE (key) > (last) ORDER BY key`). */
  key: string[];
  /**
   * Columns that point into the same table (a family member's owner): written in a second
   * pass once every row exists, since ids do not come in parent-first order.
   */
  deferred?: string[];
  /** A PostgreSQL identity column whose values are copied as they are (then the sequence moves past them). */
  identity?: string;
  /**
   * Creation order that lives outside the columns (SQLite's rowid; PostgreSQL's identity), read
   * in that order so the target assigns its own in the same order.
   */
  engineOrder?: { sqlite: string; postgres: string };
}

const t = (name: string, key: string[], columns: Record<string, ColumnKind>, extra: Partial<CopyTable> = {}): CopyTable => ({ name, key, columns, ...extra });

export const COPY_TABLES: CopyTable[] = [
  t("server_meta", ["key"], { key: "text", value: "text" }),
  t("developers", ["id"], { id: "text", email: "text", password_hash: "text", created_at: "int" }),
  t("developer_sessions", ["token_hash"], { token_hash: "text", developer_id: "text", created_at: "int", expires_at: "int" }),
  t("apps", ["id"], { id: "text", name: "text", publishable_key: "text", secret_key_hash: "text", owner_id: "text", settings: "text", created_at: "int", updated_at: "int" }),
  t(
    "tenants",
    ["id"],
    { id: "text", app_id: "text", email: "text", password_hash: "text", email_verified_at: "int", locale: "text", parent_tenant_id: "text", created_at: "int", deleting_at: "int" },
    { deferred: ["parent_tenant_id"] },
  ),
  t("sessions", ["id"], {
    id: "text", tenant_id: "text", app_id: "text", created_at: "int", expires_at: "int", ended_at: "int", end_reason: "text", authenticated_at: "int", auth_methods: "text",
  }),
  t("tenant_sign_in_blocks", ["tenant_id"], { tenant_id: "text", app_id: "text", disabled_at: "int" }),
  t("refresh_tokens", ["token_hash"], { token_hash: "text", session_id: "text", created_at: "int", rotated_at: "int", successor_hash: "text", successor_sealed: "text" }),
  t("email_tokens", ["token_hash"], { token_hash: "text", app_id: "text", tenant_id: "text", purpose: "text", created_at: "int", expires_at: "int", used_at: "int" }),
  t(
    "outbox",
    ["id"],
    { id: "text", app_id: "text", tenant_id: "text", kind: "text", locale: "text", to_address: "text", subject: "text", text_body: "text", html_body: "text", link: "text", created_at: "int" },
    { engineOrder: { sqlite: "rowid", postgres: "seq" } },
  ),
  t("records", ["seq"], { seq: "int", id: "text", app_id: "text", tenant_id: "text", collection: "text", data: "text", created_at: "int", updated_at: "int" }, { identity: "seq" }),
  t("share_links", ["id"], { id: "text", token_hash: "text", record_id: "text", created_at: "int", expires_at: "int" }),
  t("files", ["id"], { id: "text", app_id: "text", tenant_id: "text", pathname: "text", size_bytes: "int", mime_type: "text", original_filename: "text", sha256: "text", created_at: "int" }),
  t("billing_plans", ["id"], {
    id: "text", app_id: "text", name: "text", slug: "text", description: "text", price_cents: "int", currency: "text", interval: "text", sort_order: "int",
    entitlements: "text", stripe_product_id: "text", stripe_price_id: "text", archived_at: "int", created_at: "int", updated_at: "int",
  }),
  t("billing_subscriptions", ["tenant_id", "source"], {
    tenant_id: "text", source: "text", app_id: "text", plan_id: "text", status: "text", provider: "text", provider_subscription_id: "text",
    current_period_end: "int", cancel_at_period_end: "bool", expires_at: "int", created_at: "int", updated_at: "int",
  }),
  t("billing_customers", ["tenant_id"], { tenant_id: "text", app_id: "text", stripe_customer_id: "text", created_at: "int" }),
  t("billing_stripe_events", ["app_id", "event_id"], { app_id: "text", event_id: "text", type: "text", received_at: "int" }),
  t("billing_dev_sessions", ["token_hash"], {
    token_hash: "text", kind: "text", app_id: "text", tenant_id: "text", plan_id: "text", success_url: "text", cancel_url: "text", created_at: "int", expires_at: "int", used_at: "int",
    org_id: "text", seats: "int",
  }),
  t("billing_usage", ["tenant_id", "feature_key", "period", "period_start"], { tenant_id: "text", feature_key: "text", period: "text", period_start: "int", app_id: "text", count: "int" }),
  t("webhook_configs", ["app_id"], { app_id: "text", url: "text", secret_sealed: "text", secret_created_at: "int", created_at: "int", updated_at: "int" }),
  t("webhook_events", ["seq"], { seq: "int", id: "text", app_id: "text", event: "text", tenant_id: "text", data: "text", created_at: "int" }, { identity: "seq" }),
  t(
    "webhook_deliveries",
    ["seq"],
    {
      seq: "int", id: "text", app_id: "text", event: "text", tenant_id: "text", status: "text", url: "text", status_code: "int", error: "text", duration_ms: "int",
      created_at: "int", claimed_at: "int", finished_at: "int", body_sealed: "text",
    },
    { identity: "seq" },
  ),
  t("invite_tokens", ["id"], { id: "text", app_id: "text", tenant_id: "text", token_hash: "text", note: "text", created_at: "int", expires_at: "int", used_at: "int", used_by_tenant_id: "text" }),
  t("family_invites", ["id"], { id: "text", app_id: "text", tenant_id: "text", token_hash: "text", note: "text", created_at: "int", expires_at: "int", used_at: "int", used_by_tenant_id: "text" }),
  t("family_members", ["tenant_id"], { tenant_id: "text", owner_tenant_id: "text", app_id: "text", joined_at: "int" }),
  t("oauth_accounts", ["app_id", "provider", "provider_account_id"], {
    app_id: "text", provider: "text", provider_account_id: "text", tenant_id: "text", email: "text", email_verified: "bool", linked_at: "int", last_login_at: "int",
  }),
  t("oauth_states", ["state_hash"], {
    state_hash: "text", app_id: "text", provider: "text", redirect_url: "text", invite_token: "text", code_verifier: "text", browser_hash: "text", created_at: "int", expires_at: "int", used_at: "int",
  }),
  t("tenant_totp", ["tenant_id"], { tenant_id: "text", app_id: "text", secret_sealed: "text", confirmed_at: "int", last_step: "int", created_at: "int" }),
  t("recovery_codes", ["tenant_id", "code_hash"], { tenant_id: "text", code_hash: "text", created_at: "int", used_at: "int" }),
  t("passkeys", ["id"], {
    id: "text", app_id: "text", tenant_id: "text", credential_id: "text", public_key: "text", counter: "int", transports: "text", name: "text", created_at: "int", last_used_at: "int",
  }),
  t("auth_challenges", ["hash"], { hash: "text", app_id: "text", tenant_id: "text", kind: "text", data: "text", attempts: "int", created_at: "int", expires_at: "int", used_at: "int" }),
  t("signing_keys", ["kid"], { kid: "text", app_id: "text", public_key: "text", private_key_sealed: "text", created_at: "int", retired_at: "int" }),
  t("email_sign_ins", ["id"], {
    id: "text", app_id: "text", email: "text", link_hash: "text", code_hash: "text", attempts: "int", created_at: "int", expires_at: "int", used_at: "int",
  }),
  t("anonymous_tenants", ["tenant_id"], { tenant_id: "text", app_id: "text", created_at: "int" }),
  t("audit_log", ["app_id", "seq"], {
    app_id: "text", seq: "int", id: "text", at: "int", actor_type: "text", actor_id: "text", action: "text", tenant_id: "text", target: "text", ip: "text",
    client: "text", request_id: "text", details: "text", prev_hash: "text", hash: "text",
  }),
  t("audit_heads", ["app_id"], { app_id: "text", seq: "int", hash: "text", pruned_seq: "int", pruned_hash: "text" }),
  t("orgs", ["id"], { id: "text", app_id: "text", name: "text", kind: "text", created_at: "int", updated_at: "int" }),
  t("org_members", ["org_id", "tenant_id"], { org_id: "text", tenant_id: "text", app_id: "text", role: "text", joined_at: "int" }),
  t("org_invites", ["id"], {
    id: "text", org_id: "text", app_id: "text", created_by: "text", email: "text", role: "text", token_hash: "text", created_at: "int", expires_at: "int", used_at: "int",
    used_by_tenant_id: "text", uses: "int",
  }),
  t("export_links", ["token_hash"], { token_hash: "text", app_id: "text", tenant_id: "text", created_at: "int", expires_at: "int", used_at: "int" }),
  t("backup_operators", ["developer_id"], { developer_id: "text", granted_at: "int" }),
  t("org_billing_subscriptions", ["org_id", "source"], {
    org_id: "text", source: "text", app_id: "text", plan_id: "text", status: "text", provider: "text", provider_subscription_id: "text",
    current_period_end: "int", cancel_at_period_end: "bool", expires_at: "int", seats: "int", created_at: "int", updated_at: "int",
  }),
  t("org_billing_customers", ["org_id"], { org_id: "text", app_id: "text", stripe_customer_id: "text", created_at: "int" }),
  t("org_billing_usage", ["org_id", "feature_key", "period", "period_start"], { org_id: "text", feature_key: "text", period: "text", period_start: "int", app_id: "text", count: "int" }),
];

/** Tables one engine keeps for itself; the target builds its own. */
export const NOT_COPIED: Record<string, string> = {
  schema_migrations: "each engine's own migration versions; the target is migrated to the current schema before the copy",
  record_auto_indexes: "each engine's bookkeeping of automatic record indexes: rebuilt on the target when lists use the fields again",
  record_field_indexes: "SQLite's per-field record indexes: declared ones are built again from the copied settings, automatic ones when lists use the fields again",
  record_field_entries: "the entries of SQLite's per-field record indexes: the target builds its own",
  record_field_drops: "SQLite's per-field record indexes being dropped: nothing to carry over",
  record_scopes: "PostgreSQL's per-collection record counts and versions: its triggers count the copied records as they are written",
  record_bytes: "SQLite's per-tenant bytes of record data (the byte quota): its triggers count the copied records as they are written",
  record_byte_stripes: "PostgreSQL's per-tenant bytes of record data (the byte quota): its triggers count the copied records as they are written",
  sqlite_sequence: "SQLite's AUTOINCREMENT counters: follow the copied seq values by themselves",
  change_counters: "PostgreSQL's cache-invalidation counters: the target's count its own changes",
  rate_windows: "PostgreSQL's shared rate-limit windows (SQLite keeps them in memory): counters, not data; they start afresh",
  login_failures: "PostgreSQL's shared sign-in failure counts (SQLite keeps them in memory): they start afresh",
  login_devices: "PostgreSQL's shared record of devices that signed in (SQLite keeps it in memory): known again at their next sign-in",
  realtime_changes: "the realtime change feed: kept for minutes so streams can resume; a stream resuming on the target starts afresh (a reset event)",
  realtime_feed: "the realtime feed's pruning mark: the target keeps its own",
  realtime_interest: "which apps PostgreSQL nodes have realtime streams of, for minutes: the target's nodes announce their own",
  realtime_tickets: "one-use realtime stream tickets, valid for seconds: a client asks for a new one",
  cron_runs: "the last runs of scheduled jobs: a log of this store's nodes; the target's nodes keep their own",
  maintenance_runs: "when each housekeeping job last ran on PostgreSQL: the target's first node runs them again",
  records_fts: "SQLite's full-text index of records: rebuilt from the records by the search sync at the target's first start",
  records_fts_data: "a shadow table of SQLite's records_fts (full-text index): rebuilt with it",
  records_fts_idx: "a shadow table of SQLite's records_fts (full-text index): rebuilt with it",
  records_fts_content: "a shadow table of SQLite's records_fts (full-text index): rebuilt with it",
  records_fts_docsize: "a shadow table of SQLite's records_fts (full-text index): rebuilt with it",
  records_fts_config: "a shadow table of SQLite's records_fts (full-text index): rebuilt with it",
  record_search: "PostgreSQL's full-text index of records: rebuilt from the records by the search sync at the target's first start",
  idempotency_keys: "answers kept 24 hours for retried writes (Idempotency-Key): a retry sent across a store copy is written again",
};

/** The server_meta key a copy in progress writes first and removes last: a target holding it is a copy that did not finish. */
export const COPY_MARKER = "store_copy_in_progress";

/** A value on its way between engines: integers as bigint (exact at any size), booleans as booleans. */
export type CopyValue = string | bigint | boolean | null;

/** Columns only one engine has; the target derives its own. */
export const ENGINE_COLUMNS: Record<string, string> = {
  "records.doc": "PostgreSQL's jsonb of `data`, generated from the copied text",
  "outbox.seq": "PostgreSQL's creation order of outbox messages (SQLite's rowid): the target numbers them in the copied order",
};
