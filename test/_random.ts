/** A deterministic generator of numbers in [0, 1): a test that fails names its seed, and replays. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Random records and list filter conditions over the given values and paths: mixed types,
 * missing fields, nulls, nested paths, metadata. The differential tests of the list filter
 * (postgres-records, realtime-matcher) draw from it.
 */
export function recordFilterGenerator(values: { scalars: readonly unknown[]; objects: readonly unknown[]; paths: readonly string[] }) {
  const { scalars, objects, paths } = values;
  const pick = <T,>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const randomValue = (r: () => number): unknown => (r() < 0.85 ? pick(r, scalars) : pick(r, objects));
  function randomRecord(r: () => number): Record<string, unknown> {
    const d: Record<string, unknown> = {};
    if (r() < 0.85) d.v = randomValue(r);
    if (r() < 0.6) d.w = randomValue(r);
    const roll = r();
    if (roll < 0.6) {
      const n: Record<string, unknown> = {};
      if (r() < 0.7) n.x = r() < 0.15 ? { deep: pick(r, scalars) } : randomValue(r);
      if (r() < 0.5) n.y = randomValue(r);
      d.n = n;
    } else if (roll < 0.75) {
      d.n = randomValue(r);
    }
    return d;
  }
  function randomCondition(r: () => number, times: number[], ids: string[]): [string, unknown] {
    const roll = r();
    if (roll < 0.08) {
      const iso = (ms: number) => new Date(ms).toISOString();
      const op = pick(r, ["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"]);
      return [pick(r, ["$createdAt", "$updatedAt"]), { [op]: iso(pick(r, times)) }];
    }
    if (roll < 0.12) return ["$id", r() < 0.5 ? pick(r, ids) : { $in: [pick(r, ids), pick(r, ids), "rec-nope"] }];
    const path = pick(r, paths);
    const op = pick(r, ["$eq", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "implicit"]);
    if (op === "$in") return [path, { $in: Array.from({ length: 1 + Math.floor(r() * 4) }, () => (r() < 0.9 ? pick(r, scalars) : pick(r, objects))) }];
    const value = op === "$eq" || op === "$ne" || op === "implicit" ? randomValue(r) : pick(r, scalars);
    if (op === "implicit") return [path, value !== null && typeof value === "object" && !Array.isArray(value) ? { $eq: value } : value];
    return [path, { [op]: value }];
  }
  return { pick, randomValue, randomRecord, randomCondition };
}
