import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { buildOpenApiDocument } from "./document.ts";

// Run by `npm run build` from dist/openapi: writes dist/openapi.json (export "tenantd/openapi.json").
const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };
const target = fileURLToPath(new URL("../openapi.json", import.meta.url));
writeFileSync(target, `${JSON.stringify(buildOpenApiDocument({ version }))}\n`);
