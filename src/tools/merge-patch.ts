export type JsonObject = { [key: string]: unknown };

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * RFC 7396 JSON Merge Patch: objects merge recursively, `null` removes a key, anything else
 * replaces. Keys are defined, not assigned, so a "__proto__" key from JSON.parse stays an
 * ordinary key instead of changing the result's prototype.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: JsonObject = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else {
      const current = Object.hasOwn(result, key) ? result[key] : undefined;
      Object.defineProperty(result, key, { value: mergePatch(current, value), enumerable: true, writable: true, configurable: true });
    }
  }
  return result;
}

/** True when objects and arrays nest deeper than `max` levels; stops walking at the limit. */
export function nestsDeeperThan(value: unknown, max: number, level = 0): boolean {
  if (value === null || typeof value !== "object") return false;
  if (level >= max) return true;
  return Object.values(value).some((v) => nestsDeeperThan(v, max, level + 1));
}
