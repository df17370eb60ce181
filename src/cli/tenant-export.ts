import { defineCommand } from "citty";
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { existsSync } from "node:fs";
import { appArg, CliError, dataDirArg, jsonArg, print, tenantArg, withCore } from "./shared.ts";
import { requireAppRef } from "../apps/service.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { exportArchive } from "../export/export.ts";
import { audit, OPERATOR } from "../audit/audit.ts";

export default defineCommand({
  meta: { name: "export", description: "Write everything a tenant owns (account, billing, records, files) to a ZIP file" },
  args: {
    ...dataDirArg,
    ...jsonArg,
    ...appArg,
    ...tenantArg,
    out: { type: "string", description: "The ZIP file to write (default: export-<tenant id>.zip)", valueHint: "file.zip" },
  },
  run: ({ args }) =>
    withCore(args, async (core) => {
      const app = await requireAppRef(core, args.app);
      const tenant = await requireTenantRef(core, app, args.tenant);
      const out = args.out ?? `export-${tenant.id}.zip`;
      if (existsSync(out)) throw new CliError(`${out} already exists: name another file with --out, or move it away.`);
      await audit(core, { appId: app.id, action: "tenant.data_exported", tenantId: tenant.id, actor: OPERATOR });
      const archive = exportArchive(core, app, tenant);
      const file = createWriteStream(out, { flags: "wx" });
      let bytes = 0;
      await pipeline(Readable.fromWeb(archive as import("node:stream/web").ReadableStream<Uint8Array>), async function* (source: AsyncIterable<Uint8Array>) {
        for await (const chunk of source) {
          bytes += chunk.length;
          yield chunk;
        }
      }, file);
      print(args.json, { tenantId: tenant.id, file: out, bytes }, () => `wrote ${out} (${bytes} bytes) for tenant ${tenant.id} (${tenant.email})`);
    }),
});
