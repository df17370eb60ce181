import { describe, expect, it } from "vitest";
import { build } from "esbuild";
import { gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const root = process.cwd();

/** Bundles `source` for a browser as an app would: ESM, minified, tree-shaken. */
async function bundle(source: string, platform: "browser" | "neutral" = "browser") {
  const result = await build({
    stdin: { contents: source, resolveDir: join(root, "test"), sourcefile: "app.ts", loader: "ts" },
    bundle: true,
    minify: true,
    format: "esm",
    platform,
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]!.contents;
  return { bytes: code.length, gzipped: gzipSync(code, { level: 9 }).length, inputs: Object.keys(result.metafile.inputs) };
}

describe("tenantd/client bundle", () => {
  it("a browser app importing only auth and data stays under 8 KB minified and gzipped, without Node modules or valibot", async () => {
    const app = await bundle(`
      import { createClient, localStorageAdapter } from "../src/client/index.ts";
      const client = createClient({ url: "https://api.example.com", appId: "app_x", key: "pk_x", storage: localStorageAdapter() });
      client.auth.onAuthStateChange((event) => console.log(event));
      await client.auth.signIn({ email: "a@example.com", password: "secret password" });
      const notes = client.collection<{ title: string }>("notes");
      console.log(await notes.list({ filter: { title: { $in: ["a"] } } }), await notes.create({ title: "b" }));
    `);
    // The figure docs/client.md states; printed so a change shows in the test log.
    console.log(`client bundle (auth + data): ${app.bytes} B minified, ${app.gzipped} B gzipped`);
    expect(app.gzipped).toBeLessThan(8 * 1024);
    // docs/client.md is the one place that states the size (the README links to it): it says
    // what this measures, so a change to the client updates the figure with it.
    const doc = readFileSync(join(root, "docs", "client.md"), "utf8");
    const stated = /\*\*([\d.]+) KB minified and gzipped\*\* \(([\d,]+) bytes; ([\d,]+) bytes minified/.exec(doc);
    expect(stated?.slice(1).map((n) => n.replaceAll(",", ""))).toEqual([(app.gzipped / 1024).toFixed(1), String(app.gzipped), String(app.bytes)]);
    expect(readFileSync(join(root, "README.md"), "utf8")).not.toMatch(/\d KB\s+gzipped/);
    expect(app.inputs.filter((i) => !i.startsWith("src/client/") && i !== "test/app.ts")).toEqual([]);
  });

  it("verifyWebhook bundles for edge runtimes with no Node built-ins", async () => {
    const verifier = await bundle(`import { verifyWebhook } from "../src/webhooks/verify.ts"; export default verifyWebhook;`, "neutral");
    expect(verifier.inputs.sort()).toEqual(["src/webhooks/verify.ts", "test/app.ts"]);
    expect(verifier.gzipped).toBeLessThan(2 * 1024);
  });
});
