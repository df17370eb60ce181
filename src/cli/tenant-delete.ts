import { defineCommand } from "citty";
import { createAdminApi } from "../admin/api.ts";
import { appArg, CliError, dataDirArg, jsonArg, print, tenantArg, withCore } from "./shared.ts";

export default defineCommand({
  meta: { name: "delete", description: "Delete a tenant and everything it owns; fires tenant.deleted (admin_delete)" },
  args: {
    ...dataDirArg,
    ...jsonArg,
    ...appArg,
    ...tenantArg,
    yes: { type: "boolean", description: "Confirm the deletion", default: false },
  },
  run: ({ args }) =>
    withCore(args, async (core) => {
      if (!args.yes) throw new CliError(`this permanently deletes tenant ${args.tenant} and all its data. Run again with --yes to confirm.`);
      const deleted = await createAdminApi(core).deleteTenant(args.app, args.tenant);
      print(args.json, { deleted: true, ...deleted }, () =>
        `deleted tenant ${deleted.tenantId} (${deleted.email}); the tenant.deleted webhook is queued and sent by the running server`,
      );
    }),
});
