import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

// The fixtures live inside the repo (tsc resolves the client's .ts sources relatively)
// in a folder of their own, removed afterwards; the main typecheck never sees them.
const HEADER = `import { createClient } from "../../src/client/index.ts";
interface Task { title: string; done: boolean; n: number; meta?: { priority: number } }
const tasks = createClient({ url: "http://x", appId: "app_x", key: "pk_x" }).collection<Task>("tasks");
`;

const CORRECT = `${HEADER}
void tasks.list({ filter: { done: false, n: { $gte: 1, $lt: 9 }, title: { $in: ["a", "b"] }, "meta.priority": { $ne: 2 }, $createdAt: { $gt: "2026-01-01T00:00:00Z" } }, sort: { n: -1, $createdAt: 1 } });
void tasks.update("rec_1", { meta: null, n: 3 });
`;

/** Each line is a mistake tsc must refuse; the marker names the line in the output. */
const WRONG = [
  `void tasks.list({ filter: { n: { $regex: "^a" } } }); // wrong operator`,
  `void tasks.list({ filter: { n: { $gte: "3" } } }); // wrong value type`,
  `void tasks.list({ filter: { titel: "a" } }); // unknown field`,
  `void tasks.list({ sort: { n: "desc" } }); // wrong sort direction`,
];

async function tsc(dir: string): Promise<{ code: number; out: string }> {
  const bin = join(process.cwd(), "node_modules", "typescript", "bin", "tsc");
  try {
    const { stdout } = await run(process.execPath, [bin, "--noEmit", "-p", dir]);
    return { code: 0, out: stdout };
  } catch (e) {
    const err = e as { code: number; stdout: string };
    return { code: err.code, out: err.stdout };
  }
}

describe("tenantd/client typed filters (tsc --noEmit)", () => {
  it("compiles the spec's operators on typed fields and refuses a wrong operator, value, field or sort", async () => {
    const dir = mkdtempSync(join(process.cwd(), "test", ".client-types-"));
    try {
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ extends: "../../tsconfig.json", include: ["*.ts"], compilerOptions: { rootDir: "../.." } }));
      writeFileSync(join(dir, "correct.ts"), CORRECT);
      writeFileSync(join(dir, "wrong.ts"), HEADER + WRONG.join("\n") + "\n");
      const { code, out } = await tsc(dir);
      expect(code).not.toBe(0);
      const errors = out.split("\n").filter((l) => /error TS\d+/.test(l));
      expect(errors.filter((l) => l.includes("correct.ts"))).toEqual([]);
      const header = HEADER.split("\n").length - 1;
      const failedLines = new Set(errors.filter((l) => l.includes("wrong.ts")).map((l) => Number(/wrong\.ts\((\d+),/.exec(l)?.[1]) - header - 1));
      expect([...failedLines].sort()).toEqual(WRONG.map((_, i) => i));
      expect(out).toContain("$regex");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
