import { defineCommand } from "citty";
import { requireAppRef } from "../apps/service.ts";
import type { Core } from "../core.ts";
import { grantGift, grantTrial, revokeGift, tenantBilling } from "../billing/grants.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { appArg, CliError, dataDirArg, jsonArg, print, tenantArg, withCore } from "./shared.ts";

const targetArgs = { ...appArg, ...tenantArg } as const;

async function target(core: Core, args: { app: string; tenant: string }) {
  const app = await requireAppRef(core, args.app);
  return { app, tenant: await requireTenantRef(core, app, args.tenant) };
}

const days = (s: string | undefined) => {
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s)) throw new CliError("--days must be a whole number");
  return Number(s);
};

type View = Awaited<ReturnType<typeof tenantBilling>>;
const describe = (v: View) =>
  [
    `tenant:        ${v.tenantId}`,
    `subscription:  ${v.subscription ? `${v.subscription.planSlug} (${v.subscription.source}, ${v.subscription.status}${v.subscription.currentPeriodEnd ? `, until ${v.subscription.currentPeriodEnd}` : ""})` : "none"}`,
    `entitlements:  ${JSON.stringify(v.entitlements)}`,
    ...v.sources.map((s) => `source:        ${s.source} ${s.plan?.slug ?? "?"} ${s.status}${s.expiresAt ? ` expires ${s.expiresAt}` : ""}${s.provider ? ` via ${s.provider}` : ""}`),
    ...v.usage.map((u) => `usage:         ${u.featureKey} ${u.period} ${u.count}/${u.limit ?? "∞"}`),
  ].join("\n");

export default defineCommand({
  meta: { name: "billing", description: "A tenant's subscription, gifts, trials and usage" },
  subCommands: {
    show: defineCommand({
      meta: { name: "show", description: "Show a tenant's effective subscription, entitlements, sources and usage" },
      args: { ...dataDirArg, ...jsonArg, ...targetArgs },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app, tenant } = await target(core, args);
          const view = await tenantBilling(core, app, tenant);
          print(args.json, view, () => describe(view));
        }),
    }),
    usage: defineCommand({
      meta: { name: "usage", description: "Show a tenant's usage counters of the current UTC month and day" },
      args: { ...dataDirArg, ...jsonArg, ...targetArgs },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app, tenant } = await target(core, args);
          const { usage } = await tenantBilling(core, app, tenant);
          print(args.json, { usage }, () => usage.map((u) => `${u.featureKey} ${u.period} ${u.count}/${u.limit ?? "∞"}`).join("\n") || "No usage this period.");
        }),
    }),
    gift: defineCommand({
      meta: { name: "gift", description: "Give a tenant a plan (permanent unless --days or --expires)" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...targetArgs,
        plan: { type: "string", description: "Plan id or slug", required: true },
        days: { type: "string", description: "The gift ends after this many days" },
        expires: { type: "string", description: "The gift ends at this ISO time, e.g. 2027-01-01T00:00:00Z" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app, tenant } = await target(core, args);
          const view = await grantGift(core, app, tenant, { planId: args.plan, days: days(args.days), expiresAt: args.expires });
          print(args.json, view, () => describe(view));
        }),
    }),
    "revoke-gift": defineCommand({
      meta: { name: "revoke-gift", description: "Take a tenant's gift away" },
      args: { ...dataDirArg, ...targetArgs },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app, tenant } = await target(core, args);
          await revokeGift(core, app, tenant);
          process.stdout.write(`gift revoked for ${tenant.email}\n`);
        }),
    }),
    trial: defineCommand({
      meta: { name: "trial", description: "Start (or restart) a trial; plan and days default to the app's trial settings" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...targetArgs,
        plan: { type: "string", description: "Plan id or slug" },
        days: { type: "string", description: "Trial length in days" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const { app, tenant } = await target(core, args);
          const view = await grantTrial(core, app, tenant, { planId: args.plan, days: days(args.days) });
          print(args.json, view, () => describe(view));
        }),
    }),
  },
});
