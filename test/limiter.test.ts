import { describe, expect, it } from "vitest";
import { createLimiter } from "../src/tools/limiter.ts";
import { createPasswordHasher } from "../src/crypto/password.ts";
import { TEST_ARGON2 } from "./_helpers.ts";

/** A task that stays running until released by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("limiter", () => {
  it("runs at most max tasks at once, in arrival order, and a failed task frees its slot", async () => {
    const limit = createLimiter(2);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    const results = gates.map((g, i) =>
      limit(async () => {
        started.push(i);
        await g.opened;
        if (i === 1) throw new Error("task 1 failed");
        return i;
      }).catch((e: Error) => e.message),
    );
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await settle();
    expect(started).toEqual([0, 1]);
    gates[1]!.open();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open();
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const g of gates) g.open();
    expect(await Promise.all(results)).toEqual([0, "task 1 failed", 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });
});

describe("password hasher", () => {
  it("answers every one of many concurrent checks correctly while hashing one at a time", async () => {
    const hasher = createPasswordHasher(TEST_ARGON2, 1);
    const stored = await hasher.hash("correct horse battery");
    const checks = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? hasher.verify(stored, "correct horse battery") : hasher.verify(stored, "wrong password"))),
    );
    expect(checks).toEqual([true, false, true, false, true, false]);
    expect(await hasher.verify("not an argon2 hash", "correct horse battery")).toBe(false);
    expect(await hasher.verifyDummy("anything")).toBe(false);
  });
});
