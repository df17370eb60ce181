import { defineCommand } from "citty";

// A named const, not `export default defineCommand(…)`: tsc 5.9 does not rewrite the `.ts`
// of a dynamic import inside an `export default` expression, and the built CLI would break.
const tenant = defineCommand({
  meta: { name: "tenant", description: "Act on an app's tenants" },
  subCommands: {
    delete: () => import("./tenant-delete.ts").then((m) => m.default),
    "resend-verification": () => import("./tenant-verify.ts").then((m) => m.default),
  },
});

export default tenant;
