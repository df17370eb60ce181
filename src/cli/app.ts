import { defineCommand } from "citty";
import { createAdminApi } from "../admin/api.ts";
import type { PublicApp } from "../apps/service.ts";
import type { JsonObject } from "../tools/merge-patch.ts";
import { CliError, dataDirArg, jsonArg, print, secretFlag, withCore, commaList } from "./shared.ts";

const refArg = { app: { type: "positional", description: "App id or name", required: true } } as const;

const describe = (a: PublicApp) =>
  [
    `id:              ${a.id}`,
    `name:            ${a.name}`,
    `publishable key: ${a.publishableKey}`,
    `owner:           ${a.ownerId ?? "(none)"}`,
    `created:         ${a.createdAt}`,
    `settings:        ${JSON.stringify(a.settings, null, 2).replace(/\n/g, "\n                 ")}`,
  ].join("\n");

function parseSettings(raw: string | undefined): JsonObject | undefined {
  if (raw === undefined) return undefined;
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error();
    return value as JsonObject;
  } catch {
    throw new CliError(`--settings must be a JSON object (a merge patch), e.g. '{"signupMode":"closed"}'`);
  }
}


export default defineCommand({
  meta: { name: "app", description: "Create, inspect and change apps" },
  subCommands: {
    create: defineCommand({
      meta: { name: "create", description: "Create an app and print its id and publishable key" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        name: { type: "string", description: "App name", required: true },
        owner: { type: "string", description: "Email of the developer who owns it (default: the only developer, if there is one)", valueHint: "email" },
        "cors-origins": { type: "string", description: "Comma-separated browser origins allowed to call the API", valueHint: "https://a.example,https://b.example" },
        settings: { type: "string", description: 'Settings as JSON; "-" reads it from stdin (keeps Stripe keys and OAuth secrets out of argv)', valueHint: "json" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const settings = { ...parseSettings(await secretFlag(args.settings, "settings (JSON): ", { whole: true })) };
          const origins = commaList(args["cors-origins"]);
          if (origins) settings.corsOrigins = origins;
          const app = await createAdminApi(core).createApp({ name: args.name, ownerEmail: args.owner, settings });
          print(args.json, { app }, () => describe(app) + (app.ownerId ? "" : "\nno owner yet: no developer sees it in the admin API until you run tenantd app update <app> --owner <email>"));
        }, { create: true }),
    }),
    list: defineCommand({
      meta: { name: "list", description: "List every app in the data directory" },
      args: { ...dataDirArg, ...jsonArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const apps = await createAdminApi(core).listApps();
          print(args.json, { apps }, () =>
            apps.length === 0 ? "No apps yet. Create one with: tenantd app create --name my-app" : apps.map((a) => `${a.id}  ${a.publishableKey}  ${a.name}`).join("\n"),
          );
        }),
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show an app with its settings (secrets redacted)" },
      args: { ...dataDirArg, ...jsonArg, ...refArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const app = await createAdminApi(core).getApp(args.app);
          print(args.json, { app }, () => describe(app));
        }),
    }),
    update: defineCommand({
      meta: { name: "update", description: "Rename an app or change its settings (JSON merge patch)" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...refArg,
        name: { type: "string", description: "New name" },
        owner: { type: "string", description: "Email of the developer who owns it", valueHint: "email" },
        "signup-mode": { type: "string", description: "open, invite_only or closed" },
        "cors-origins": { type: "string", description: "Comma-separated origins (replaces the list)" },
        settings: { type: "string", description: 'Settings merge patch as JSON (null removes a key); "-" reads it from stdin (keeps secrets out of argv)', valueHint: "json" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const settings = { ...parseSettings(await secretFlag(args.settings, "settings (JSON): ", { whole: true })) };
          if (args["signup-mode"] !== undefined) settings.signupMode = args["signup-mode"];
          const origins = commaList(args["cors-origins"]);
          if (origins) settings.corsOrigins = origins;
          const admin = createAdminApi(core);
          if (args.owner) await admin.setAppOwner(args.app, args.owner);
          const app = await admin.updateApp(args.app, { name: args.name, settings });
          print(args.json, { app }, () => describe(app));
        }),
    }),
    "rotate-key": defineCommand({
      meta: { name: "rotate-key", description: "Issue a new publishable key; the old one stops working at once" },
      args: { ...dataDirArg, ...jsonArg, ...refArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const app = await createAdminApi(core).rotateAppKey(args.app);
          print(args.json, { app }, () => `new publishable key: ${app.publishableKey}`);
        }),
    }),
    "secret-key": defineCommand({
      meta: { name: "secret-key", description: "Issue the app's server-side secret key (x-service-secret), shown once; the previous one stops working" },
      args: { ...dataDirArg, ...jsonArg, ...refArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const secretKey = await createAdminApi(core).rotateAppSecretKey(args.app);
          print(args.json, { secretKey }, () => `secret key (shown once, keep it on your server): ${secretKey}`);
        }),
    }),
    "signing-keys": defineCommand({
      meta: { name: "signing-keys", description: "List the app's access-token signing keys (its JWKS: /api/v1/apps/<id>/.well-known/jwks.json)" },
      args: { ...dataDirArg, ...jsonArg, ...refArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const keys = await createAdminApi(core).listSigningKeys(args.app);
          print(args.json, { keys }, () => keys.map((k) => `${k.kid}  ${k.current ? "current" : `retired ${k.retiredAt}, verifies until ${k.verifiesUntil}`}  created ${k.createdAt}`).join("\n"));
        }),
    }),
    "rotate-signing-key": defineCommand({
      meta: { name: "rotate-signing-key", description: "Sign access tokens with a new key; the old one keeps verifying until its tokens have expired" },
      args: { ...dataDirArg, ...jsonArg, ...refArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const r = await createAdminApi(core).rotateSigningKey(args.app);
          print(args.json, r, () => `new signing key: ${r.kid}` + (r.previousKid ? `\nprevious key ${r.previousKid} verifies until ${r.previousVerifiesUntil}` : ""));
        }),
    }),
    delete: defineCommand({
      meta: { name: "delete", description: "Delete an app and everything in it (tenants, records, files)" },
      args: { ...dataDirArg, ...refArg, yes: { type: "boolean", description: "Confirm the deletion", default: false } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          if (!args.yes) throw new CliError(`this deletes app ${args.app} and all its tenants and data. Run again with --yes to confirm.`);
          await createAdminApi(core).deleteApp(args.app);
          process.stdout.write(`deleted app ${args.app}\n`);
        }),
    }),
  },
});
