import { defineCommand } from "citty";
import { createAdminApi } from "../admin/api.ts";
import type { PublicDelivery } from "../webhooks/deliveries.ts";
import { appArg, CliError, dataDirArg, jsonArg, print, withCore } from "./shared.ts";


const describeConfig = (c: { url: string | null; secretCreatedAt: string | null }) =>
  c.url === null ? "no webhook URL set (events are logged as invalid_config)" : [`url:            ${c.url}`, `secret created: ${c.secretCreatedAt}`].join("\n");

const describeDelivery = (d: PublicDelivery) =>
  [d.createdAt, d.status.padEnd(14), d.event.padEnd(34), d.statusCode ?? "-", `${d.durationMs ?? "-"}ms`, d.tenantId ?? "-", d.error ?? ""].join("  ").trimEnd();

function wholeNumber(raw: string | undefined, name: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) throw new CliError(`--${name} must be a whole number from ${min} to ${max}`);
  return n;
}

export default defineCommand({
  meta: { name: "webhook", description: "Configure an app's outgoing webhook and read its delivery log" },
  subCommands: {
    set: defineCommand({
      meta: { name: "set", description: "Set the HTTPS endpoint; prints the signing secret the first time (only then)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, url: { type: "string", description: "Endpoint URL (https://…)", required: true, valueHint: "https://api.example.com/webhooks" } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const config = await createAdminApi(core).setWebhookUrl(args.app, args.url);
          print(args.json, config, () =>
            [
              describeConfig(config),
              config.secret === null
                ? "the signing secret is unchanged (tenantd webhook rotate issues a new one)"
                : `signing secret: ${config.secret}\nStore it now: it is not shown again.`,
            ].join("\n"),
          );
        }),
    }),
    rotate: defineCommand({
      meta: { name: "rotate", description: "Issue a new signing secret and print it once; the old one stops at once" },
      args: { ...dataDirArg, ...jsonArg, ...appArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const config = await createAdminApi(core).rotateWebhookSecret(args.app);
          print(args.json, config, () => `signing secret: ${config.secret}\nStore it now: it is not shown again. The old secret no longer signs deliveries.`);
        }),
    }),
    show: defineCommand({
      meta: { name: "show", description: "Show the endpoint and when its secret was made (never the secret)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const config = await createAdminApi(core).getWebhookConfig(args.app);
          print(args.json, config, () => describeConfig(config));
        }),
    }),
    remove: defineCommand({
      meta: { name: "remove", description: "Remove the endpoint and its secret" },
      args: { ...dataDirArg, ...appArg },
      run: ({ args }) =>
        withCore(args, async (core) => {
          await createAdminApi(core).removeWebhookConfig(args.app);
          process.stdout.write("webhook removed: events are now logged as invalid_config\n");
        }),
    }),
    delivery: defineCommand({
      meta: { name: "delivery", description: "One delivery and the exact body it sent (the raw text its signature covers)" },
      args: { ...dataDirArg, ...jsonArg, ...appArg, id: { type: "string", description: "Delivery id (evt_…), from `tenantd webhook deliveries`", required: true } },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const d = await createAdminApi(core).getWebhookDelivery(args.app, args.id);
          print(args.json, d, () => [describeDelivery(d), d.body ?? `(no body: ${d.bodyNote})`].join("\n"));
        }),
    }),
    deliveries: defineCommand({
      meta: { name: "deliveries", description: "The delivery log, newest first" },
      args: {
        ...dataDirArg,
        ...jsonArg,
        ...appArg,
        limit: { type: "string", description: "Rows to show (1-1000, default 50)" },
        offset: { type: "string", description: "Rows to skip (default 0)" },
      },
      run: ({ args }) =>
        withCore(args, async (core) => {
          const page = await createAdminApi(core).listWebhookDeliveries(args.app, {
            limit: wholeNumber(args.limit, "limit", 1, 1000),
            offset: wholeNumber(args.offset, "offset", 0, Number.MAX_SAFE_INTEGER),
          });
          print(args.json, page, () =>
            [
              ...(page.deliveries.length === 0 ? ["no deliveries yet"] : page.deliveries.map(describeDelivery)),
              `${page.deliveries.length} of ${page.total} shown; ${page.queued} queued (a running server sends them)`,
            ].join("\n"),
          );
        }),
    }),
  },
});
