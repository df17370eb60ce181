import { defineCommand } from "citty";
import { requireAppRef } from "../apps/service.ts";
import { resendVerification } from "../auth/verify-email.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { appArg, dataDirArg, jsonArg, print, tenantArg, withCore } from "./shared.ts";

/** `tenantd tenant resend-verification`: the dashboard's resend action, without a server. */
export default defineCommand({
  meta: {
    name: "resend-verification",
    description: "Send a tenant a new verification email (or, when the app delivers its own email, fire tenant.email.resend_verification)",
  },
  args: {
    ...dataDirArg,
    ...jsonArg,
    ...appArg,
    ...tenantArg,
  },
  run: ({ args }) =>
    withCore(args, async (core) => {
      const app = await requireAppRef(core, args.app);
      const tenant = await requireTenantRef(core, app, args.tenant);
      const { sentBy, expiresAt } = await resendVerification(core, app, tenant);
      const result = { ok: true, sentBy, expiresAt: new Date(expiresAt).toISOString() };
      print(args.json, result, () =>
        sentBy === "tenantd"
          ? `verification email queued for ${tenant.email} (link valid until ${result.expiresAt})`
          : `the app delivers its own email: tenant.email.resend_verification fired for ${tenant.email}`,
      );
    }),});
