import { describe, expect, it } from "vitest";
import { toIso } from "../src/clock.ts";

describe("toIso", () => {
  it("writes what Date#toISOString writes, for edges and 200,000 random instants from 1970 to 9999", () => {
    const edges = [
      0, 1, 999, 1000, 86_399_999, 86_400_000,
      Date.UTC(2000, 1, 29, 12), Date.UTC(2000, 2, 1), Date.UTC(2100, 1, 28, 23, 59, 59, 999), Date.UTC(2100, 2, 1),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999), Date.UTC(2026, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    const last = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const random = Array.from({ length: 200_000 }, () => Math.floor(Math.random() * last));
    const wrong = [...edges, ...random].filter((ms) => toIso(ms) !== new Date(ms).toISOString());
    expect(wrong).toEqual([]);
  });

  it("keeps writing the right date for instants side by side: one day, across midnight and back, in turns with other days", () => {
    const midnight = Date.UTC(2026, 10, 28);
    const walk = [midnight - 1, midnight, midnight - 1, midnight + 1, midnight - 86_400_000, midnight + 86_399_999, midnight + 86_400_000, midnight];
    const steps = Array.from({ length: 5000 }, (_, i) => midnight - 50_000_000 + i * 20_011);
    const wrong = [...walk, ...steps, ...walk].filter((ms) => toIso(ms) !== new Date(ms).toISOString());
    expect(wrong).toEqual([]);
  });

  it("leaves null, instants outside 1970–9999 and fractions of a millisecond to Date", () => {
    expect(toIso(null)).toBeNull();
    expect(toIso(undefined)).toBeNull();
    for (const ms of [-1, -86_400_001, Date.UTC(10000, 0, 1), 8.64e15, 1.5]) expect(toIso(ms)).toBe(new Date(ms).toISOString());
    expect(() => toIso(Number.NaN)).toThrow(RangeError);
  });
});
