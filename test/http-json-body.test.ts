import { describe, expect, it } from "vitest";
import * as v from "valibot";
import { H3Event } from "h3";
import { readJson } from "../src/http/body.ts";
import { periodStart } from "../src/billing/periods.ts";

const post = (body: string | undefined) =>
  new H3Event(new Request("http://localhost/x", { method: "POST", body, headers: body === undefined ? {} : { "content-type": "application/json" } }));
const read = <S extends v.GenericSchema>(schema: S, body: string | undefined) => Promise.resolve(readJson(post(body), schema, 1024));

describe("an empty JSON body, read again and again", () => {
  const Defaults = v.object({ tags: v.optional(v.array(v.string()), []), n: v.optional(v.number(), 1), mode: v.optional(v.picklist(["a", "b"]), "a") });

  it("gives the schema's defaults every time, whatever a handler did to the last one", async () => {
    const first = await read(Defaults, "{}");
    expect(first).toEqual({ tags: [], n: 1, mode: "a" });
    first.tags.push("leaked");
    first.n = 99;
    (first as Record<string, unknown>).extra = true;
    for (const body of ["{}", undefined, "{}"]) {
      const again = await read(Defaults, body);
      expect(again).toEqual({ tags: [], n: 1, mode: "a" });
      expect(again).not.toBe(first);
      again.tags.push("leaked too");
    }
    expect(await read(Defaults, '{"n":2}')).toEqual({ tags: [], n: 2, mode: "a" });
    expect(await read(Defaults, "{}")).toEqual({ tags: [], n: 1, mode: "a" });
  });

  it("keeps refusing `{}` for a schema with a required field", async () => {
    const Required = v.object({ name: v.string() });
    for (let i = 0; i < 3; i++) await expect(read(Required, "{}")).rejects.toMatchObject({ status: 400, body: { error: "invalid_request" }, message: "body.name is required." });
  });

  it("gives fresh nested objects for a schema whose defaults hold one", async () => {
    const Nested = v.object({ options: v.optional(v.object({ deep: v.optional(v.boolean(), false) }), {}) });
    const first = await read(Nested, "{}");
    expect(first).toEqual({ options: { deep: false } });
    first.options.deep = true;
    expect(await read(Nested, "{}")).toEqual({ options: { deep: false } });
  });
});

describe("periodStart", () => {
  it("follows the clock across days, months and years, forwards and back", () => {
    const at = (...parts: [number, number, number, number?, number?]) => Date.UTC(...parts);
    const cases: [number, number, number][] = [
      [at(2026, 0, 15, 12), at(2026, 0, 1), at(2026, 0, 15)],
      [at(2026, 0, 31, 23, 59) + 59_999, at(2026, 0, 1), at(2026, 0, 31)],
      [at(2026, 1, 1), at(2026, 1, 1), at(2026, 1, 1)],
      [at(2026, 0, 31, 23, 59) + 59_999, at(2026, 0, 1), at(2026, 0, 31)],
      [at(2028, 1, 29, 8), at(2028, 1, 1), at(2028, 1, 29)],
      [at(2028, 2, 1), at(2028, 2, 1), at(2028, 2, 1)],
      [at(2026, 11, 31, 23), at(2026, 11, 1), at(2026, 11, 31)],
      [at(2027, 0, 1), at(2027, 0, 1), at(2027, 0, 1)],
      [at(2026, 0, 15, 13), at(2026, 0, 1), at(2026, 0, 15)],
    ];
    for (const [now, month, day] of cases) {
      expect(new Date(periodStart("monthly", now)).toISOString()).toBe(new Date(month).toISOString());
      expect(new Date(periodStart("daily", now)).toISOString()).toBe(new Date(day).toISOString());
    }
  });
});
