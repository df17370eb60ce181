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
