import { defineCommand } from "citty";

// A named const: see tenant.ts (tsc keeps `.ts` in a dynamic import inside `export default`).
const store = defineCommand({
  meta: { name: "store", description: "Move the whole store between SQLite and PostgreSQL (store copy)" },
  subCommands: {
    copy: () => import("./store-copy.ts").then((m) => m.default),
  },
});

export default store;
