import { defineCommand } from "citty";
import { requireAppRef } from "../apps/service.ts";
import type { PlanRow } from "../db/types.ts";
import { createPlan, setPlanArchived, toAdminPlan, updatePlan } from "../billing/plans.ts";
import { syncPlanToStripe } from "../billing/stripe-sync.ts";
import { appArg, CliError, dataDirArg, jsonArg, print, withCore } from "./shared.ts";

const planArg = { plan: { type: "positional", description: "Plan id or slug", required: true } } as const;
const fieldArgs = {
  name: { type: "string", description: "Plan name" },
  slug: { type: "string", description: "Unique per app: lower-case letters, digits, dashes" },
  description: { type: "string", description: "Shown to tenants" },
  "price-cents": { type: "string", description: "Price in cents, e.g. 900", valueHint: "cents" },
  currency: { type: "string", description: "ISO currency code (default usd)" },
  interval: { type: "string", description: "month or year (default month)" },
  "sort-order": { type: "string", description: "Position in the plan list (lower first)" },
  entitlements: { type: "string", description: `Entitlements as JSON, e.g. '{"projects":10,"export":true}'`, valueHint: "json" },
  "stripe-price": { type: "string", description: "Link an existing Stripe price id (price_…)" },
} as const;

type FieldArgs = { [K in keyof typeof fieldArgs]?: string };

/** CLI flags to the same body the admin API takes; the plan functions validate it. */
function toBody(args: FieldArgs): Record<string, unknown> {
  const num = (flag: string, s: string | undefined) => {
    if (s === undefined) return undefined;
    if (!/^-?\d+$/.test(s.trim())) throw new CliError(`${flag} must be a whole number (got ${s})`);
    return Number(s);
  };
  let entitlements: unknown;
  if (args.entitlements !== undefined) {
    try {
      entitlements = JSON.parse(args.entitlements);
    } catch {
      throw new CliError(`--entitlements must be JSON, e.g. '{"projects":10,"export":true}'`);
    }
  }
  const body = {
    name: args.name,
    slug: args.slug,
    description: args.description,
    priceCents: num("--price-cents", args["price-cents"]),
    currency: args.currency,
    interval: args.interval,
    sortOrder: num("--sort-order", args["sort-order"]),
    entitlements,
    stripePriceId: args["stripe-price"],
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

const line = (p: PlanRow) =>
  `${p.id}  ${p.slug.padEnd(16)} ${(p.priceCents / 100).toFixed(2)} ${p.currency}/${p.interval}  ${JSON.stringify(p.entitlements)}${p.stripePriceId ? `  stripe:${p.stripePriceId}` : ""}${p.archivedAt ? "  (archived)" : ""}`;

/** Plan fields the core names (`body.stripePriceId`) that have another flag than their kebab case. */
const withPlanCore: typeof withCore = (args, fn) => withCore(args, fn, { flags: { stripePriceId: "--stripe-price" } });

const showOne = (json: boolean, plan: PlanRow) => print(json, { plan: toAdminPlan(plan) }, () => line(plan));

export default defineCommand({
  meta: { name: "plan", description: "Billing plans of an app" },
  subCommands: {
    list: defineCommand({
      meta: { name: "list", description: "List an app's plans (sorted as tenants see them)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, all: { type: "boolean", description: "Include archived plans", default: false } },
      run: ({ args }) =>
        withPlanCore(args, async (core) => {
          const app = await requireAppRef(core, args.app);
          const plans = await core.db.billing.listPlans(app.id, { includeArchived: args.all });
          print(args.json, { plans: plans.map(toAdminPlan) }, () => plans.map(line).join("\n") || "No plans yet. Create one with: tenantd plan create --app <app> --name Pro --slug pro --price-cents 900");
        }),
    }),
    create: defineCommand({
      meta: { name: "create", description: "Create a plan" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, ...fieldArgs },
      run: ({ args }) =>
        withPlanCore(args, async (core) => showOne(args.json, await createPlan(core, await requireAppRef(core, args.app), toBody(args)))),
    }),
    update: defineCommand({
      meta: { name: "update", description: "Change a plan (only the flags given)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, ...planArg, ...fieldArgs },
      run: ({ args }) =>
        withPlanCore(args, async (core) => showOne(args.json, await updatePlan(core, await requireAppRef(core, args.app), args.plan, toBody(args)))),
    }),
    archive: defineCommand({
      meta: { name: "archive", description: "Hide a plan from the list and checkout; subscribers keep it" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, ...planArg },
      run: ({ args }) => withPlanCore(args, async (core) => showOne(args.json, await setPlanArchived(core, await requireAppRef(core, args.app), args.plan, true))),
    }),
    unarchive: defineCommand({
      meta: { name: "unarchive", description: "Offer an archived plan again" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, ...planArg },
      run: ({ args }) => withPlanCore(args, async (core) => showOne(args.json, await setPlanArchived(core, await requireAppRef(core, args.app), args.plan, false))),
    }),
    "sync-stripe": defineCommand({
      meta: { name: "sync-stripe", description: "Create the plan's product and price in Stripe (or a new price when the plan's price changed)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, ...planArg },
      run: ({ args }) => withPlanCore(args, async (core) => showOne(args.json, await syncPlanToStripe(core, await requireAppRef(core, args.app), args.plan))),
    }),
  },
});
