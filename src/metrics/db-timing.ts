import type { Repositories } from "../db/repositories.ts";
import { isThenable } from "../awaitable.ts";
import { SYNC_MEMBERS } from "../db/postgres/deferred.ts";

/** Called once per repository call, with its name (`tenants.findById`) and its seconds. */
export type ObserveOperation = (operation: string, seconds: number) => void;

/**
 * The repositories with every call timed: the database's share of a request, by operation.
 * A SQLite answer that is there at once stays synchronous (src/awaitable.ts). Only a core
 * with metrics on is given these; the others keep the plain repositories.
 */
export function timedRepositories(db: Repositories, observe: ObserveOperation, inFlight: { n: number }): Repositories {
  const timed: Record<string, unknown> = {};
  for (const [area, repo] of Object.entries(db)) {
    if (repo === undefined) continue;
    const wrapped: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(repo as Record<string, unknown>)) {
      // The synchronous steps run inside a transaction another operation times already.
      wrapped[name] = typeof member === "function" && !SYNC_MEMBERS.has(name) ? timeOne(`${area}.${name}`, member as (...args: unknown[]) => unknown, repo, observe, inFlight) : member;
    }
    timed[area] = wrapped;
  }
  return timed as unknown as Repositories;
}

function timeOne(operation: string, fn: (...args: unknown[]) => unknown, self: unknown, observe: ObserveOperation, inFlight: { n: number }) {
  return (...args: unknown[]) => {
    const started = performance.now();
    const done = () => {
      inFlight.n--;
      observe(operation, (performance.now() - started) / 1000);
    };
    inFlight.n++;
    let result: unknown;
    try {
      result = fn.apply(self, args);
    } catch (e) {
      done();
      throw e;
    }
    if (!isThenable(result)) {
      done();
      return result;
    }
    return Promise.resolve(result).finally(done);
  };
}
