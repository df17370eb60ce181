import { describe, expect, it } from "vitest";
import { keptTickObject } from "../src/http/tick-shape.ts";
import { startBackend } from "./_helpers.ts";

describe("the kept tick object (src/http/tick-shape.ts)", () => {
  it("is one of Node's process.nextTick objects, kept once a backend has started", async () => {
    await startBackend();
    await new Promise((resolve) => setImmediate(resolve));
    const kept = keptTickObject();
    // If Node stops handing out its tick object, the shapes are no longer kept: this fails.
    expect(kept).toBeTypeOf("object");
    const symbols = Object.getOwnPropertySymbols(kept!).map((s) => s.description);
    expect(symbols).toEqual(["async_id_symbol", "trigger_async_id_symbol"]);
    expect(Object.keys(kept!)).toEqual(["callback", "args"]);
    expect((kept as { args?: unknown }).args).toBeUndefined();
  });
});
