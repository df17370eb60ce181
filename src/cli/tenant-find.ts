import { defineCommand } from "citty";
import { requireAppRef } from "../apps/service.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { appArg, CliError, dataDirArg, jsonArg, print, tenantArg, withCore } from "./shared.ts";

const whole = (flag: string, value: string | undefined, dflt: number, max: number) => {
  if (value === undefined) return dflt;
  if (!/^\d+$/.test(value) || Number(value) > max) throw new CliError(`${flag} must be a whole number from 0 to ${max} (got ${value})`);
  return Number(value);
};

const date = (flag: string, value: string | undefined) => {
  if (value === undefined) return undefined;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw new CliError(`${flag} must be a date (2026-01-31) or an ISO time (2026-01-31T12:00:00Z), got ${value}`);
  return ms;
};

type PublicTenant = ReturnType<typeof toPublicTenant>;
const line = (t: PublicTenant) => `${t.id}  ${t.email.padEnd(32)} ${t.emailVerifiedAt ? "verified  " : "unverified"}  created ${t.createdAt}`;

export const list = defineCommand({
  meta: { name: "list", description: "List an app's tenants, newest first; filter by email, verification and creation time" },
  args: {
    ...dataDirArg,
    ...jsonArg,
    ...appArg,
    email: { type: "string", description: "Only emails containing this text" },
    verified: { type: "boolean", description: "Only tenants who verified their email" },
    unverified: { type: "boolean", description: "Only tenants who have not verified their email" },
    "created-since": { type: "string", description: "Created at or after this date or ISO time (UTC)", valueHint: "2026-01-01" },
    "created-before": { type: "string", description: "Created before this date or ISO time (UTC)", valueHint: "2026-02-01" },
    limit: { type: "string", description: "Page size, 1 to 1000 (default 50)", valueHint: "50" },
    offset: { type: "string", description: "Skip this many (default 0)", valueHint: "0" },
  },
  run: ({ args }) =>
    withCore(args, async (core) => {
      if (args.verified && args.unverified) throw new CliError("give --verified or --unverified, not both");
      const limit = whole("--limit", args.limit, 50, 1000);
      if (limit === 0) throw new CliError("--limit must be at least 1");
      const offset = whole("--offset", args.offset, 0, Number.MAX_SAFE_INTEGER);
      const app = await requireAppRef(core, args.app);
      const { tenants, total } = await core.db.tenants.list(app.id, {
        emailContains: args.email?.trim().toLowerCase(),
        verified: args.verified ? true : args.unverified ? false : undefined,
        createdFrom: date("--created-since", args["created-since"]),
        createdBefore: date("--created-before", args["created-before"]),
        limit,
        offset,
      });
      const page = tenants.map(toPublicTenant);
      print(args.json, { tenants: page, total, limit, offset }, () => {
        if (total === 0) return "No tenants match.";
        const shown = page.length === 0 ? `none of ${total} on this page` : `${offset + 1}–${offset + page.length} of ${total}`;
        const more = offset + page.length < total ? `; next page: --offset ${offset + page.length}` : "";
        return [...page.map(line), `(${shown}${more})`].join("\n");
      });
    }),
});

export const show = defineCommand({
  meta: { name: "show", description: "Show one tenant, named by id or email" },
  args: { ...dataDirArg, ...jsonArg, ...appArg, ...tenantArg },
  run: ({ args }) =>
    withCore(args, async (core) => {
      const app = await requireAppRef(core, args.app);
      const tenant = await requireTenantRef(core, app, args.tenant);
      const view = toPublicTenant(tenant);
      print(args.json, { tenant: view }, () =>
        [
          `id:        ${view.id}`,
          `email:     ${view.email}`,
          `verified:  ${view.emailVerifiedAt ?? "no"}`,
          `created:   ${view.createdAt}`,
          `locale:    ${tenant.locale}`,
          ...(tenant.parentTenantId ? [`family of: ${tenant.parentTenantId}`] : []),
          `billing:   tenantd billing show ${view.email} --app ${app.name}`,
        ].join("\n"),
      );
    }),
});
