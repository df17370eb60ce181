import { defineCommand } from "citty";
import { createAdminApi } from "../admin/api.ts";
import type { PublicApp } from "../apps/service.ts";
import { appArg, CliError, commaList, dataDirArg, jsonArg, print, withCore } from "./shared.ts";

const collectionArg = { collection: { type: "positional", description: "Collection name (letters and digits)", required: true } } as const;

type Collections = Record<string, { unique?: string[]; indexed?: string[] }>;
const collectionsOf = (app: PublicApp) => ((app.settings as { collections?: Collections }).collections ?? {}) as Collections;
const describe = (name: string, c: { unique?: string[]; indexed?: string[] } | undefined) =>
  `${name}: unique ${c?.unique?.length ? c.unique.join(", ") : "(none)"}; indexed ${c?.indexed?.length ? c.indexed.join(", ") : "(none)"}`;

/** `tenantd collection set todo --app X` and not `set X todo`: every command names the app with --app. */
function oneCollection(args: { app?: string; collection: string; _: string[] }): { app: string; name: string } {
  if (args._.length > 1) {
    throw new CliError(`give one collection and name the app with --app: tenantd collection set ${args._[1]} --app ${args._[0]} …`);
  }
  if (!args.app) throw new CliError("--app is required (the app's id or name)");
  return { app: args.app, name: args.collection };
}

/** --app, checked in `run` so that `set <app> <collection>` gets the message above. */
const optionalAppArg = { app: { ...appArg.app, required: false } } as const;

const collection = defineCommand({
  meta: { name: "collection", description: "Unique and indexed fields of an app's collections" },
  subCommands: {
    set: defineCommand({
      meta: { name: "set", description: "Set a collection's unique and indexed fields (a flag not given keeps its list; an empty value clears it)" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...optionalAppArg,
        ...collectionArg,
        unique: { type: "string", description: "Comma-separated fields unique within one tenant's collection (409 conflict on a duplicate)", valueHint: "email,sku" },
        index: { type: "string", description: "Comma-separated fields to index, so filters and sorts on them stay fast", valueHint: "status,dueAt" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app: ref, name } = oneCollection(args);
          const unique = commaList(args.unique);
          const indexed = commaList(args.index);
          if (!unique && !indexed) throw new CliError("give --unique, --index or both (an empty value clears the list)");
          const patch = { ...(unique && { unique }), ...(indexed && { indexed }) };
          const app = await createAdminApi(core).updateApp(ref, { settings: { collections: { [name]: patch } } });
          const settings = collectionsOf(app)[name];
          print(args.json, { collection: name, unique: settings?.unique ?? [], indexed: settings?.indexed ?? [] }, () => describe(name, settings));
        }),
    }),
    list: defineCommand({
      meta: { name: "list", description: "Show every collection that has unique or indexed fields" },
      args: { ...dataDirArg, ...jsonArg, ...appArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const collections = collectionsOf(await createAdminApi(core).getApp(args.app));
          print(args.json, { collections }, () =>
            Object.entries(collections).map(([name, c]) => describe(name, c)).join("\n") || "No collection settings yet. Set some with: tenantd collection set <collection> --app <app> --unique email --index status",
          );
        }),
    }),
    remove: defineCommand({
      meta: { name: "remove", description: "Drop a collection's unique and indexed fields (its records stay)" },
      args: { ...dataDirArg, ...jsonArg, ...optionalAppArg, ...collectionArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app: ref, name } = oneCollection(args);
          await createAdminApi(core).updateApp(ref, { settings: { collections: { [name]: null } } });
          print(args.json, { collection: name, removed: true }, () => `${name}: no unique or indexed fields any more`);
        }),
    }),
  },
});

export default collection;
