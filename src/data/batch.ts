import * as v from "valibot";
import { HTTPError } from "h3";
import type { Core } from "../core.ts";
import type { TenantAuth } from "../http/guards.ts";
import type { BatchOutcome, BatchWrite, IdempotencyClaim, RecordRow } from "../db/types.ts";
import { fail, type ErrorCode } from "../errors.ts";
import { newId } from "../crypto/random.ts";
import { BatchFailure } from "../db/shared.ts";
import { recordCaps, type RecordCaps } from "../account/quotas.ts";
import { effectiveEntitlement } from "../billing/effective.ts";
import { asLimit, FeatureKeyParam, MAX_INCREMENT } from "../billing/usage.ts";
import { periodStart, type UsagePeriod } from "../billing/periods.ts";
import { checkData, checkPatch, fed, notFound, patchData, recordJson, storeError, upsertKey, writeScope } from "./records.ts";
import { afterRecordHook, beforeRecordHook } from "../server-hooks/records.ts";

/**
 * POST /api/v1/batch: record writes and usage increments of one tenant, in order, in one
 * transaction: all of them or none. Each operation is checked and scoped exactly as its
 * single call (recordScope: the caller's own records only), counts against the record quota
 * and usage limits as that call would, in order (the store checks the quota in each insert,
 * so a delete earlier in the batch frees room for a create after it), goes through the
 * server hooks as that call does (each `before` hook ahead of the transaction, each `after`
 * hook once it committed), and answers what that call answers, in `results`.
 */

export const MAX_BATCH_OPERATIONS = 100;

const collection = v.string("collection must be a string");
const id = v.string("id must be a string");
export const BatchOperation = v.variant(
  "op",
  [
    v.object({ op: v.literal("create"), collection, data: v.unknown() }),
    v.object({ op: v.literal("update"), collection, id, data: v.unknown() }),
    v.object({ op: v.literal("upsert"), collection, data: v.unknown() }),
    v.object({ op: v.literal("delete"), collection, id }),
    v.object({
      op: v.literal("increment"),
      featureKey: FeatureKeyParam,
      by: v.optional(v.pipe(v.number(), v.integer("must be a whole number"), v.minValue(1, "must be at least 1"), v.maxValue(MAX_INCREMENT, `must be at most ${MAX_INCREMENT}`)), 1),
      period: v.optional(v.picklist(["monthly", "daily"], "must be monthly or daily"), "monthly"),
    }),
  ],
  "op must be create, update, upsert, delete or increment",
);
export type BatchOperation = v.InferOutput<typeof BatchOperation>;

export const BatchBody = v.object({
  operations: v.pipe(
    v.array(BatchOperation, "operations must be an array"),
    v.minLength(1, "operations must hold at least one operation"),
    v.maxLength(MAX_BATCH_OPERATIONS, `a batch holds at most ${MAX_BATCH_OPERATIONS} operations: split it`),
  ),
});

/** An operation made ready to write: the store's write and how its outcome is checked, answered and told to the `after` hook. */
interface Prepared {
  write: BatchWrite;
  check(outcome: BatchOutcome): void;
  /** the single call's status and body (JSON text, or null for 204) */
  reply(outcome: BatchOutcome): { status: number; body: string | null };
  after?(outcome: BatchOutcome): Promise<unknown>;
}

const recordReply = (status: number, row: RecordRow) => ({ status, body: `{"record":${recordJson(row)}}` });

/** `caps`: the tenant's record caps (recordCaps), looked up once per batch. */
async function prepare(core: Core, auth: TenantAuth, op: BatchOperation, caps: () => Promise<RecordCaps>): Promise<Prepared> {
  if (op.op === "increment") {
    // An organization's usage counters are its billing's (src/orgs/billing.ts), not a tenant's.
    if (auth.orgId !== undefined) {
      throw fail("invalid_request", `An organization's batch writes records only: count usage with POST /api/v1/orgs/${auth.orgId}/billing/usage/${op.featureKey}/increment.`);
    }
    const limit = asLimit(await effectiveEntitlement(core, auth.app, auth.tenantId, op.featureKey));
    const period = op.period as UsagePeriod;
    return {
      write: { kind: "usage", usage: { appId: auth.app.id, tenantId: auth.tenantId, featureKey: op.featureKey, period, periodStart: periodStart(period, core.clock()), by: op.by, limit } },
      check(outcome) {
        if (outcome === undefined) {
          throw fail("limit_reached", `Usage limit reached for ${op.featureKey}: adding ${op.by} would pass the limit of ${limit} this ${period === "monthly" ? "month" : "day"} (UTC).`);
        }
      },
      reply: (count) => ({ status: 200, body: JSON.stringify({ count, period, limit }) }),
    };
  }
  const { scope, unique } = writeScope(core, auth, op.collection);
  // The hooks of the single calls, in their order: `before` on the input, then its checks.
  const hooks = core.serverHooks !== undefined;
  const before = (hookOp: "create" | "update" | "delete", input: unknown, id?: string) => (hooks ? beforeRecordHook(core, hookOp, auth, op.collection, input, id) : input);
  const after = (hookOp: "create" | "update" | "delete", row: RecordRow | undefined, id?: string) => afterRecordHook(core, hookOp, auth, op.collection, row, id);
  switch (op.op) {
    case "create": {
      const data = checkData(await before("create", op.data));
      const { records, bytes } = await caps();
      return {
        write: { kind: "insert", scope, id: newId("rec"), data, unique, cap: records, bytesCap: bytes },
        check() {},
        reply: (row) => recordReply(201, row as RecordRow),
        after: (row) => after("create", row as RecordRow),
      };
    }
    case "update": {
      const patch = checkPatch(await before("update", op.data, op.id));
      return {
        write: { kind: "update", scope, id: op.id, transform: patchData(patch), unique, bytesCap: (await caps()).bytes },
        check(outcome) {
          if (outcome === undefined) throw notFound(op.collection, op.id);
        },
        reply: (row) => recordReply(200, row as RecordRow),
        after: (row) => after("update", row as RecordRow),
      };
    }
    case "upsert": {
      // An upsert may create: the create hook sees its data, as for the single upsert.
      const data = checkData(await before("create", op.data));
      const { records, bytes } = await caps();
      return {
        write: { kind: "upsert", scope, key: upsertKey(op.collection, unique, data), newId: newId("rec"), data, transform: patchData(data), unique, cap: records, bytesCap: bytes },
        check() {},
        reply: (outcome) => {
          const { row, created } = outcome as { row: RecordRow; created: boolean };
          return { status: created ? 201 : 200, body: `{"record":${recordJson(row)},"created":${created}}` };
        },
        after: (outcome) => {
          const { row, created } = outcome as { row: RecordRow; created: boolean };
          return after(created ? "create" : "update", row);
        },
      };
    }
    case "delete":
      await before("delete", undefined, op.id);
      return {
        write: { kind: "remove", scope, id: op.id },
        check(outcome) {
          if (outcome === false) throw notFound(op.collection, op.id);
        },
        reply: () => ({ status: 204, body: null }),
        after: () => after("delete", undefined, op.id),
      };
  }
}

/** How an operation is named in an error: its index in `operations`, what it does and where. */
function describe(op: BatchOperation, index: number): string {
  const where = op.op === "increment" ? op.featureKey : "id" in op ? `${op.collection}/${op.id.slice(0, 80)}` : op.collection;
  return `operations[${index}] (${op.op} ${where})`;
}

/**
 * The operation's own error; in a batch its message says which operation failed (status and
 * code stay the operation's own).
 */
function failedAt(op: BatchOperation, index: number, cause: unknown, single: boolean): unknown {
  const error = op.op === "increment" ? cause : storeError(op.collection, cause);
  if (single || !HTTPError.isError(error) || error.status >= 500) return error;
  const code = (error.body?.error as ErrorCode | undefined) ?? "invalid_request";
  return fail(code, `${describe(op, index)} failed, so nothing of the batch was written: ${error.message}`);
}

export interface WriteReply {
  status: number;
  /** JSON text; null for 204 */
  body: string | null;
}

/**
 * Runs `ops` as one transaction. `single`: the answer is the one operation's own (a single
 * write sent with an Idempotency-Key runs here, so its answer is kept in its transaction),
 * and its errors are not prefixed. With `claim`, the answer is kept for retries; "taken" when
 * the key already holds one (nothing was written).
 */
export async function runBatch(core: Core, auth: TenantAuth, ops: BatchOperation[], opts: { single?: boolean; claim?: IdempotencyClaim } = {}): Promise<WriteReply | "taken"> {
  const single = opts.single === true;
  let capped: Promise<RecordCaps> | undefined;
  const caps = () => (capped ??= recordCaps(core, auth.app, auth.tenantId, auth.orgId));
  const prepared: Prepared[] = [];
  for (const [i, op] of ops.entries()) {
    try {
      prepared.push(await prepare(core, auth, op, caps));
    } catch (e) {
      throw failedAt(op, i, e, single);
    }
  }
  const check = (i: number, outcome: BatchOutcome) => prepared[i]!.check(outcome);
  const answer = (outcomes: BatchOutcome[]): WriteReply => {
    if (single) return prepared[0]!.reply(outcomes[0]);
    const results = outcomes.map((o, i) => {
      const { status, body } = prepared[i]!.reply(o);
      return body === null ? `{"status":${status}}` : `{"status":${status},${body.slice(1)}`;
    });
    return { status: 200, body: `{"results":[${results.join(",")}]}` };
  };
  let outcome: BatchOutcome[] | "taken";
  // The answer kept with the key is built in the transaction: the same one is sent.
  let kept: WriteReply | undefined;
  try {
    outcome = await core.db.records.batch(
      prepared.map((p) => p.write),
      core.clock(),
      check,
      opts.claim && { key: opts.claim, reply: (o) => (kept = answer(o)) },
    );
  } catch (e) {
    if (e instanceof BatchFailure) throw failedAt(ops[e.index]!, e.index, e.cause, single);
    throw e;
  }
  if (outcome === "taken") return "taken";
  for (const p of prepared) if (p.write.kind !== "usage") fed(core, p.write.scope);
  // After the commit, as single writes: a replay of a kept answer runs no hook again.
  if (core.serverHooks) for (const [i, p] of prepared.entries()) await p.after?.(outcome[i]);
  return kept ?? answer(outcome);
}
