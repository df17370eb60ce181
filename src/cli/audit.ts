import { defineCommand } from "citty";
import { createAdminApi } from "../admin/api.ts";
import type { AuditEntry } from "../audit/audit.ts";
import { dataDirArg, jsonArg, print, withCore } from "./shared.ts";

const describe = (e: AuditEntry) =>
  [e.at, String(e.seq).padStart(6), e.action.padEnd(28), `${e.actor.type}${e.actor.id ? `:${e.actor.id}` : ""}`.padEnd(34), e.tenantId ?? "-", e.ip ?? "-", e.details ? JSON.stringify(e.details) : ""]
    .join("  ")
    .trimEnd();

export default defineCommand({
  meta: { name: "audit", description: "Read an app's audit trail and prove it unbroken" },
  subCommands: {
    list: defineCommand({
      meta: { name: "list", description: "List audit entries, newest first" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        app: { type: "string", description: "App id or name", required: true, valueHint: "app" },
        tenant: { type: "string", description: "Only entries about this tenant id" },
        action: { type: "string", description: "Only this action, or a prefix ending in * (tenant.*)" },
        actor: { type: "string", description: "Only this kind of actor: developer, tenant, operator or system" },
        from: { type: "string", description: "From this time (ISO 8601 or YYYY-MM-DD)" },
        to: { type: "string", description: "Before this time" },
        limit: { type: "string", description: "Entries per page (1-500, default 50)" },
        cursor: { type: "string", description: "The next-cursor printed by the previous page" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app, json, tenant, action, actor, from, to, limit, cursor } = args;
          const page = await createAdminApi(core).listAudit(app, { tenant, action, actor: actor as never, from, to, limit, cursor });
          print(json, page, () =>
            page.entries.length === 0
              ? "No audit entries."
              : [...page.entries.map(describe), ...(page.nextCursor ? [`more: --cursor ${page.nextCursor}`] : [])].join("\n"),
          );
        }, { flags: { tenant: "--tenant", actorId: "--actor-id" } }),
    }),
    verify: defineCommand({
      meta: { name: "verify", description: "Check every entry's hash and link, for one app or all; exits 1 when a chain is broken" },
      args: { ...dataDirArg, ...jsonArg, app: { type: "string", description: "App id or name (default: every app with a trail)", valueHint: "app" } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const reports = await createAdminApi(core).verifyAudit(args.app);
          print(args.json, { ok: reports.every((r) => r.ok), chains: reports }, () =>
            reports.length === 0
              ? "No audit trail yet."
              : reports
                  .map((r) =>
                    r.ok
                      ? `${r.appId}: ok, ${r.entries} entries${r.entries ? ` (${r.firstSeq} to ${r.lastSeq})` : ""}${r.prunedSeq ? `, entries up to ${r.prunedSeq} dropped by retention` : ""}`
                      : `${r.appId}: BROKEN at entry ${r.seq}: ${r.reason}`,
                  )
                  .join("\n"),
          );
          if (reports.some((r) => !r.ok)) process.exitCode = 1;
        }),
    }),
  },
});
