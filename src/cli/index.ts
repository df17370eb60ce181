import { defineCommand, runMain } from "citty";
import { createRequire } from "node:module";
import { unknownFlag } from "./flags.ts";

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

export const main = defineCommand({
  meta: { name: "tenantd", version, description: "Self-hostable backend for apps: auth, records, files, billing, webhooks" },
  subCommands: {
    serve: () => import("./serve.ts").then((m) => m.default),
    app: () => import("./app.ts").then((m) => m.default),
    developer: () => import("./developer.ts").then((m) => m.default),
    oauth: () => import("./oauth.ts").then((m) => m.default),
    mail: () => import("./mail.ts").then((m) => m.default),
    webhook: () => import("./webhook.ts").then((m) => m.default),
    tenant: () => import("./tenant.ts").then((m) => m.default),
    plan: () => import("./plan.ts").then((m) => m.default),
    billing: () => import("./billing.ts").then((m) => m.default),
    config: () => import("./config.ts").then((m) => m.default),
    backup: () => import("./backup.ts").then((m) => m.default),
    restore: () => import("./restore.ts").then((m) => m.default),
  },
});

const unknown = await unknownFlag(main, process.argv.slice(2));
if (unknown) {
  process.stderr.write(`tenantd: unknown option ${unknown.flag} for \`${unknown.command}\`. See: ${unknown.command} --help\n`);
  process.exit(1);
}
await runMain(main);
