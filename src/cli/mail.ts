import { defineCommand } from "citty";
import { requireAppRef } from "../apps/service.ts";
import { toIso } from "../clock.ts";
import { CliError, dataDirArg, jsonArg, print, withCore } from "./shared.ts";

export default defineCommand({
  meta: { name: "mail", description: "The development outbox (emails stored instead of sent when email.transport is \"outbox\")" },
  subCommands: {
    list: defineCommand({
      meta: { name: "list", description: "List stored emails, newest first, with their links" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        app: { type: "string", description: "Only this app's emails (id or name)" },
        limit: { type: "string", description: "How many (default 20, at most 1000)", default: "20" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const limit = Number(args.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliError("--limit must be a whole number from 1 to 1000");
          const appId = args.app ? (await requireAppRef(core, args.app)).id : undefined;
          const messages = (await core.db.outbox.list({ appId, limit })).map((m) => ({ ...m, createdAt: toIso(m.createdAt)! }));
          print(args.json, { messages }, () =>
            messages.length === 0
              ? "The outbox is empty. Emails land here when email.transport is \"outbox\" (the default)."
              : messages.map((m) => `${m.createdAt}  ${m.appId}  ${m.kind} (${m.locale})  to ${m.to}\n  ${m.subject}\n  ${m.link ?? ""}`).join("\n\n"),
          );
        }),
    }),
  },
});
