import { isDeepStrictEqual } from "node:util";
import type { PgTx } from "./connection.ts";
import type { InTransactionStep } from "../types.ts";

/**
 * Bridge for the synchronous in-transaction steps of the repository interface
 * (InTransactionStep: invites.useInTransaction, family.joinInTransaction, oauth.linkStep),
 * which SQLite runs inside its synchronous transaction. PostgreSQL statements are async, so
 * a step runs twice at most: first it is planned (each call records its statement and gets
 * the success answer), the statements then run in the caller's transaction, and only when
 * an answer differs is the step run again with the real answers, so it throws its own error
 * (rolling the transaction back) exactly as on SQLite. Steps are synchronous, so no other
 * code can run while one is being planned: a module variable is safe.
 *
 * To be replaced by declarative steps (the tenant-creating transaction told "use this
 * invite", "join this family", "link this account") once the areas can change.
 */
interface Call {
  name: string;
  optimistic: unknown;
  run: (tx: PgTx) => Promise<unknown>;
}

interface Plan {
  replay: boolean;
  calls: Call[];
  results: unknown[];
  next: number;
}

let current: Plan | undefined;

/** Used by a repository method that is a step: records it, or answers it in a replay. */
export function stepCall<T>(name: string, optimistic: T, run: (tx: PgTx) => Promise<T>): T {
  if (!current) throw new Error(`postgres: ${name} runs only inside the step of tenants.createWithSession`);
  if (!current.replay) {
    current.calls.push({ name, optimistic, run });
    return optimistic;
  }
  const i = current.next++;
  if (current.calls[i]?.name !== name) throw new Error(`postgres: step replay diverged at ${name}`);
  return current.results[i] as T;
}

function runSync(plan: Plan, step: (tenantId: string) => void, tenantId: string) {
  current = plan;
  try {
    step(tenantId);
  } finally {
    current = undefined;
  }
}

export async function runStep(tx: PgTx, step: (tenantId: string) => void, tenantId: string): Promise<void> {
  const plan: Plan = { replay: false, calls: [], results: [], next: 0 };
  runSync(plan, step, tenantId);
  for (const call of plan.calls) plan.results.push(await call.run(tx));
  if (plan.calls.every((c, i) => isDeepStrictEqual(c.optimistic, plan.results[i]))) return;
  plan.replay = true;
  runSync(plan, step, tenantId);
}
