import { defineCommand } from "citty";

// A named const, not `export default defineCommand(…)`: tsc 5.9 does not rewrite the `.ts`
// of a dynamic import inside an `export default` expression, and the built CLI would break.
const tenant = defineCommand({
  meta: { name: "tenant", description: "Find and act on an app's tenants (TENANT is an id or an email)" },
  subCommands: {
    list: () => import("./tenant-find.ts").then((m) => m.list),
    show: () => import("./tenant-find.ts").then((m) => m.show),
    delete: () => import("./tenant-delete.ts").then((m) => m.default),
    "resend-verification": () => import("./tenant-verify.ts").then((m) => m.default),
    export: () => import("./tenant-export.ts").then((m) => m.default),
  },
});

export default tenant;
