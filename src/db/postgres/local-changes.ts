import type { PgChanges } from "./changes.ts";

type Methods = Record<string, unknown>;
/** What a write announces, from its arguments and its result. */
type Announcement = (args: unknown[], result: unknown) => string[];

/**
 * The repository with each named write announcing, once it has committed, what it may have
 * changed (changes.ts `announce`), so this node's caches never answer with a row its own
 * write replaced. Reads and writes that touch nothing cached are left as they are.
 */
export function announcing<T extends object>(repo: T, changes: PgChanges, writes: Partial<Record<keyof T, Announcement>>): T {
  const out: Methods = { ...(repo as Methods) };
  for (const [name, announcement] of Object.entries(writes) as [string, Announcement][]) {
    const fn = (repo as Methods)[name] as (...args: unknown[]) => Promise<unknown>;
    out[name] = async (...args: unknown[]) => {
      try {
        const result = await fn.apply(repo, args);
        for (const p of announcement(args, result)) changes.announce(p);
        return result;
      } catch (e) {
        // A failed write may still have committed part of its work elsewhere: forget broadly.
        for (const p of announcement(args, undefined)) changes.announce(p.replace(/:.*$/, ":*"));
        throw e;
      }
    };
  }
  return out as T;
}

/** Every cached session, tenant and entitlement forgotten. */
export const EVERYTHING = () => ["s:*", "t:*", "b"];
