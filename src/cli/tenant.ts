import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "tenant", description: "Act on an app's tenants" },
  subCommands: {
    delete: () => import("./tenant-delete.ts").then((m) => m.default),
  },
});
