import type { Core } from "./core.ts";
import { installAuth } from "./auth/install.ts";
import { installData } from "./data/install.ts";
import { installFiles } from "./files/install.ts";
import { installBilling } from "./billing/install.ts";
import { installWebhooks } from "./webhooks/install.ts";
import { installAccount } from "./account/install.ts";
import { installOAuth } from "./oauth/install.ts";
import { installFamily } from "./family/install.ts";
import { installAudit } from "./audit/install.ts";
import { installOrgs } from "./orgs/install.ts";
import { installRealtime } from "./realtime/install.ts";

/**
 * Wires every area's hooks into the core. Called by createCore, so the CLI gets them too.
 * Kept apart from the routes (areas.ts), so a CLI command does not load what only HTTP
 * needs (Stripe's webhook parser, arctic).
 */
export function installAreas(core: Core): void {
  installAuth(core);
  installData(core);
  // Order matters for "tenant.deleting", whose handlers run in this order: billing cancels
  // the Stripe subscription (may fail: then nothing is deleted yet) before files removes
  // blobs, which cannot be undone.
  installBilling(core);
  installFiles(core);
  installWebhooks(core);
  installAccount(core);
  installOAuth(core);
  installFamily(core);
  installAudit(core);
  installOrgs(core);
  installRealtime(core);
}
