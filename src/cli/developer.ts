import { defineCommand } from "citty";
import { createAdminApi } from "../admin/api.ts";
import { toPublicDeveloper } from "../admin/developers.ts";
import type { Core } from "../core.ts";
import { CliError, dataDirArg, jsonArg, print, promptSecret, secretFlag, withCore } from "./shared.ts";

/** Where a new developer goes next: the dashboard when it is on, else the admin API's login route. */
function signInHint(config: Core["config"]): string {
  if (!config.dashboard) return `sign in: POST ${config.publicUrl}/api/v1/developer/login with { email, password } (the dashboard is off)`;
  return `sign in to the dashboard: ${config.publicUrl}${config.dashboard.path}/ (with tenantd serve running)`;
}

const passwordArg = {
  password: { type: "string", description: 'Password (8-256 characters). Asked for (without echo) when not given or "-"; piped stdin works too' },
} as const;

export default defineCommand({
  meta: { name: "developer", description: "Developer accounts (they sign in to the admin API)" },
  subCommands: {
    create: defineCommand({
      meta: { name: "create", description: "Create a developer account. The first one owns the apps that have no owner yet" },
      args: { ...dataDirArg, ...jsonArg, ...passwordArg, email: { type: "string", description: "Email", required: true } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const password = (await secretFlag(args.password, "Password for the new developer: ")) ?? (await promptSecret("Password for the new developer: "));
          const { developer, adoptedApps } = await createAdminApi(core).createDeveloper({ email: args.email, password });
          print(args.json, { developer, adoptedApps }, () =>
            [
              `created developer ${developer.email} (${developer.id})`,
              adoptedApps > 0 ? `now owns ${adoptedApps} existing app(s)` : "",
              signInHint(core.config),
            ].filter(Boolean).join("\n"),
          );
        }, { create: true }),
    }),
    list: defineCommand({
      meta: { name: "list", description: "List developer accounts" },
      args: { ...dataDirArg, ...jsonArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const developers = (await core.db.developers.list()).map(toPublicDeveloper);
          print(args.json, { developers }, () => developers.map((d) => `${d.id}  ${d.email}`).join("\n") || "No developers yet.");
        }),
    }),
    operator: defineCommand({
      meta: { name: "operator", description: "Let a developer make and download backups from the dashboard (every app's data is in them), or take it back with --off" },
      args: { ...dataDirArg, ...jsonArg, email: { type: "positional", description: "Developer email", required: true }, off: { type: "boolean", description: "Take the right back", default: false } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const developer = await core.db.developers.findByEmail(args.email.trim().toLowerCase());
          if (!developer) throw new CliError(`No developer ${args.email}: see tenantd developer list.`);
          await core.db.developers.setBackupOperator(developer.id, !args.off, core.clock());
          print(args.json, { developer: toPublicDeveloper(developer), backupOperator: !args.off }, () =>
            args.off ? `${developer.email} can no longer make or download backups from the dashboard` : `${developer.email} can now make and download backups from the dashboard (Backups page)`,
          );
        }),
    }),
    "set-password": defineCommand({
      meta: { name: "set-password", description: "Set a developer's password and end their sessions" },
      args: { ...dataDirArg, ...passwordArg, email: { type: "string", description: "Email", required: true } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const password = (await secretFlag(args.password, "New password: ")) ?? (await promptSecret("New password: "));
          await createAdminApi(core).setDeveloperPassword(args.email, password);
          process.stdout.write(`password changed for ${args.email}\n`);
        }),
    }),
  },
});
