import { createCore } from "../core.ts";
import { resolveConfig, type TenantBackendConfig } from "../config.ts";
import { createSecretBox } from "../crypto/secret-box.ts";
import { indexedFields } from "../data/records.ts";
import type { CopyEnd } from "../db/copy/end.ts";
import { COPY_TABLES } from "../db/copy/tables.ts";
import { CliError } from "./shared.ts";
import type { Side } from "./store-sides.ts";

const WEBHOOKS = COPY_TABLES.find((t) => t.name === "webhook_configs")!;

/**
 * A wrong key would copy fine and fail later, on the target, for every tenant: when the
 * source holds a sealed webhook secret, it must open with the key the target gets.
 */
export async function checkSourceKey(source: CopyEnd, key: Buffer): Promise<void> {
  const { rows } = await source.page(WEBHOOKS, null, 1);
  const row = rows[0];
  if (!row) return;
  const columns = Object.keys(WEBHOOKS.columns);
  const appId = row[columns.indexOf("app_id")] as string;
  try {
    createSecretBox(key).open(row[columns.indexOf("secret_sealed")] as string, appId);
  } catch {
    throw new CliError(
      `the server key found for this copy does not open the source's stored secrets (app ${appId}'s webhook secret): it is not the key the source server runs with. Set TENANTD_SECRET_KEY to that key (or put its secret.key in place) and run again.`,
    );
  }
}

/** The environment without what would point the target's core elsewhere than the side named. */
function envFor(side: Side): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.TENANTD_DATABASE_URL;
  delete env.TENANTD_DATABASE_PATH;
  if (side.kind === "sqlite") delete env.TENANTD_DATA_DIR;
  return env;
}

/**
 * Opens the target once as a server would, which builds the record indexes its apps declare
 * (settings were copied; indexes are the engine's own), and closes it. Returns how many.
 */
export async function buildTargetIndexes(to: Side, configured: TenantBackendConfig, key: Buffer): Promise<number> {
  const input: TenantBackendConfig =
    to.kind === "sqlite"
      ? { dataDir: to.dir, secretKey: key.toString("hex"), logger: "error", bootstrap: false }
      : { dataDir: configured.dataDir, database: { url: to.url, pool: { max: 2 } }, secretKey: key.toString("hex"), logger: "error", bootstrap: false };
  const core = createCore(resolveConfig(input, envFor(to)));
  try {
    await core.ready;
    const apps = await core.db.apps.list();
    return apps.reduce((n, app) => n + Object.keys(app.settings.collections).reduce((m, c) => m + indexedFields(app, c).length, 0), 0);
  } finally {
    await core.close();
  }
}
