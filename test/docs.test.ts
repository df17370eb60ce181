import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { ERROR_CODES } from "../src/index.ts";

describe("docs/errors.md", () => {
  const doc = readFileSync(new URL("../docs/errors.md", import.meta.url), "utf8");
  const rows = new Map([...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));

  it("lists every error code of the catalogue with its status, and no other", () => {
    expect(Object.fromEntries(rows)).toEqual(ERROR_CODES);
  });
});

describe("docs code blocks", () => {
  it("every block fenced as JSON is JSON (no comments, no ellipses outside strings)", async () => {
    const { readdirSync } = await import("node:fs");
    const dir = new URL("../docs/", import.meta.url);
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".md"))) {
      const doc = readFileSync(new URL(file, dir), "utf8");
      for (const [, block] of doc.matchAll(/```json\n([\s\S]*?)```/g)) {
        expect(() => JSON.parse(block!), `${file}: ${block!.slice(0, 60)}`).not.toThrow();
      }
    }
  });
});

describe("advice given in two places", () => {
  it("nginx sets X-Forwarded-For the same way in docs/deployment.md and docs/security.md", () => {
    const xff = (file: string) => [...readFileSync(new URL(`../docs/${file}`, import.meta.url), "utf8").matchAll(/proxy_set_header X-Forwarded-For (\S+);/g)].map((m) => m[1]);
    expect(xff("deployment.md")).toEqual(["$proxy_add_x_forwarded_for"]);
    expect(xff("security.md")).toEqual(["$proxy_add_x_forwarded_for"]);
  });
});
