import { defineCommand } from "citty";
import { requireAppRef } from "../apps/service.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { toIso } from "../clock.ts";
import { toAdminOrg as toOperatorOrg } from "../orgs/admin.ts";
import { deleteOrgAsOperator } from "../orgs/orgs.ts";
import { toPublicMember, toPublicOrg } from "../orgs/view.ts";
import { appArg, CliError, dataDirArg, jsonArg, print, withCore } from "./shared.ts";

const orgArg = { org: { type: "positional", description: "Organization id (org_…)", required: true } } as const;

const whole = (flag: string, value: string | undefined, dflt: number, min: number, max: number) => {
  if (value === undefined) return dflt;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new CliError(`${flag} must be a whole number from ${min} to ${max} (got ${value})`);
  return Number(value);
};


export default defineCommand({
  meta: { name: "org", description: "Organizations of an app (docs/organizations.md)" },
  subCommands: {
    list: defineCommand({
      meta: { name: "list", description: "List an app's organizations, newest first, or one tenant's with --tenant" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...appArg,
        tenant: { type: "string", description: "Only this tenant's organizations (id or email), with its role", valueHint: "tenant" },
        limit: { type: "string", description: "Page size, 1 to 1000 (default 50)", valueHint: "50" },
        offset: { type: "string", description: "Skip this many (default 0)", valueHint: "0" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const app = await requireAppRef(core, args.app);
          if (args.tenant !== undefined) {
            const tenant = await requireTenantRef(core, app, args.tenant);
            const orgs = (await core.db.orgs.forTenant(app.id, tenant.id)).map(toPublicOrg);
            print(args.json, { orgs }, () => orgs.map((o) => `${o.id}  ${o.role.padEnd(10)} ${o.name}`).join("\n") || `${tenant.email} is in no organization.`);
            return;
          }
          const { orgs, total } = await core.db.orgs.list(app.id, whole("--limit", args.limit, 50, 1, 1000), whole("--offset", args.offset, 0, 0, Number.MAX_SAFE_INTEGER));
          const rows = orgs.map((o) => ({ ...toOperatorOrg(o), members: o.members }));
          print(args.json, { orgs: rows, total }, () => rows.map((o) => `${o.id}  ${String(o.members).padStart(6)} members  ${o.name}`).join("\n") || "No organizations in this app yet.");
        }),
    }),
    show: defineCommand({
      meta: { name: "show", description: "One organization and its first members (in join order)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, ...orgArg, limit: { type: "string", description: "Members to show, 1 to 1000 (default 50)", valueHint: "50" } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const app = await requireAppRef(core, args.app);
          const org = await core.db.orgs.byId(app.id, args.org);
          if (!org) throw new CliError(`No organization ${args.org} in app ${app.name}. List them with: tenantd org list --app ${args.app}`);
          const members = (await core.db.orgs.members(app.id, org.id, whole("--limit", args.limit, 50, 1, 1000))).map(toPublicMember);
          print(args.json, { org: toOperatorOrg(org), members }, () =>
            [`${org.id}  ${org.name}  (${org.kind}, created ${toIso(org.createdAt)})`, ...members.map((m) => `  ${m.tenantId}  ${m.role.padEnd(10)} ${m.email}`)].join("\n"),
          );
        }),
    }),
    delete: defineCommand({
      meta: { name: "delete", description: "Delete an organization with its members and invites" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, ...orgArg, yes: { type: "boolean", description: "Confirm the deletion", default: false } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          if (!args.yes) throw new CliError(`this permanently deletes organization ${args.org} with its members and invites. Run again with --yes to confirm.`);
          await deleteOrgAsOperator(core, await requireAppRef(core, args.app), args.org);
          print(args.json, { deleted: true, orgId: args.org }, () => `Deleted ${args.org}.`);
        }),
    }),
  },
});
