import type { TenantBackend } from "../app.ts";
import { join } from "node:path";
import { docPageUrl } from "../http/landing.ts";
import { postgresTarget } from "../db/moved.ts";

const out = (s: string) => process.stdout.write(s + "\n");

/** Hosts a client elsewhere cannot reach: links built on them work on this machine only, or nowhere. */
const UNREACHABLE = /^https?:\/\/(0\.0\.0\.0|\[::\]|\[::0?\])(:|\/|$)/;

const WALKTHROUGH = docPageUrl("walkthrough.md");

/** Names fit on one line up to a handful; past that the line would wrap for screens. */
const MAX_NAMED_APPS = 5;

function appsLine(apps: { name: string }[]): string {
  if (apps.length === 0) return "apps: (none) — create one with: tenantd app create --name my-app";
  if (apps.length > MAX_NAMED_APPS) return `apps: ${apps.length} — names, ids and keys: tenantd app list`;
  return `apps: ${apps.map((a) => a.name).join(", ")} — ids and keys: tenantd app list`;
}

/** Which store the server runs on: the SQLite file, or PostgreSQL's host, port and database (never the user or password). */
function storeLine(config: TenantBackend["core"]["config"]): string {
  if (!config.database) return `store: SQLite, ${config.databasePath}`;
  return `store: PostgreSQL, ${postgresTarget(config.database.url)} (pool of ${config.database.pool.max} connections)`;
}

/** Where file blobs go: the folder, the S3 bucket and endpoint, or the host's own driver. */
function filesLine(config: TenantBackend["core"]["config"]): string {
  if (config.storage) return "files: the storage driver given in the config";
  const choice = config.storageChoice;
  if (choice.driver === "s3") return `files: S3 bucket ${choice.bucket} at ${choice.endpoint}`;
  return `files: ${join(config.dataDir, "files")}`;
}

/** What `tenantd serve` prints once it answers: where, which mode, and what a newcomer does next. */
export async function printBanner(backend: TenantBackend, url: string, opts: { file: string | undefined; dataDirFlag: string | undefined }): Promise<void> {
  const config = backend.core.config;
  out(`tenantd listening on ${url}`);
  out(
    config.mode === "production"
      ? "mode: production (no development outbox or billing unless chosen; no links with tokens in logs)"
      : "mode: development (friendly defaults: mail outbox, development billing, links in logs). Use --production (or NODE_ENV=production) on a server.",
  );
  out(`data directory: ${config.dataDir}`);
  out(storeLine(config));
  out(filesLine(config));
  if (config.dashboard) out(`dashboard: ${config.publicUrl}${config.dashboard.path}/`);
  if (opts.file) out(`config file: ${opts.file}`);
  if (config.publicUrl !== url) out(`public URL (used in links): ${config.publicUrl}`);
  if (UNREACHABLE.test(config.publicUrl)) {
    out(`warning: links will point at ${config.publicUrl}, which clients cannot reach. Set --public-url (or TENANTD_PUBLIC_URL) to the address clients use.`);
  }
  if (config.webhooks.allowInsecure) out("webhooks: http:// and private/loopback targets allowed (webhooks.allowInsecure): development only.");
  if (config.email.transport === "outbox") {
    out(
      config.mode === "development"
        ? "email: development outbox (messages are stored and logged, not sent; read them with `tenantd mail list`). Set TENANTD_SMTP_HOST to send real mail."
        : "email: outbox, chosen explicitly (messages are stored, not sent; your app sends its own mail).",
    );
  } else {
    out(`email: SMTP via ${config.email.smtp!.host}:${config.email.smtp!.port}`);
  }
  if (config.devBilling) out("billing: apps without Stripe keys use the development provider (no real payment). Production mode turns it off.");
  if (!backend.defaultApp) out(appsLine(await backend.admin.listApps()));
  if (backend.defaultApp) {
    out("");
    out("Created the default app on this empty data directory:");
    out(`  app id:          ${backend.defaultApp.id}`);
    out(`  publishable key: ${backend.defaultApp.publishableKey}`);
    const origins = backend.defaultApp.settings.corsOrigins;
    out(
      origins.length > 0
        ? `  browser origins: ${origins.join(", ")} (development only)`
        : `  browser origins: none (production). Allow your front end with: tenantd app update default --cors-origins https://app.example.com${opts.dataDirFlag ? ` --data-dir ${opts.dataDirFlag}` : ""}`,
    );
    out("");
    out("Try it:");
    out(`  curl -X POST ${url}/api/v1/auth/signup -H 'x-service-key: ${backend.defaultApp.publishableKey}' \\`);
    out(`       -H 'content-type: application/json' -d '{"email":"me@example.com","password":"a long password"}'`);
    out("");
    out(`New here? ${WALKTHROUGH} goes through every area with curl, one command at a time.`);
    out("");
    out("Create your developer account (to sign in to the dashboard and use the admin API):");
    out(`  npx tenantd developer create --email you@example.com${opts.dataDirFlag ? ` --data-dir ${opts.dataDirFlag}` : ""}`);
  }
}
