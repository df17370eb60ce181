import type { Core } from "../core.ts";
import type { RecordRow } from "../db/types.ts";
import type { TenantAuth } from "../http/guards.ts";
import { toPublicRecord } from "../data/records.ts";
import { isPlainObject } from "../tools/merge-patch.ts";
import { fail } from "../errors.ts";
import { runHook } from "./run.ts";
import type { RecordContext } from "./types.ts";

type Op = "create" | "update" | "delete";
const BEFORE = { create: "beforeCreate", update: "beforeUpdate", delete: "beforeDelete" } as const;
const AFTER = { create: "afterCreate", update: "afterUpdate", delete: "afterDelete" } as const;

const context = (auth: TenantAuth, collection: string): RecordContext => ({ app: { id: auth.app.id, name: auth.app.name }, tenantId: auth.tenantId, collection });

/**
 * The `before` hook of a record write (the records area calls it only when the server has
 * hooks): `input` is the data (create) or merge patch (update), replaced by what the hook
 * returns; the checks of the write then run on the result.
 */
export async function beforeRecordHook(core: Core, op: Op, auth: TenantAuth, collection: string, input: unknown, id?: string): Promise<unknown> {
  const hook = core.serverHooks?.records?.[BEFORE[op]];
  if (!hook) return input;
  if (op !== "delete" && !isPlainObject(input)) return input; // the write refuses it in its own words
  const ctx = { ...context(auth, collection), ...(id !== undefined && { id }), ...(op === "create" ? { data: input } : op === "update" ? { patch: input } : {}) };
  const out = await runHook(core, `records.${BEFORE[op]}`, () => (hook as (c: typeof ctx) => unknown)(ctx));
  if (out === undefined || op === "delete") return input;
  if (!isPlainObject(out)) throw fail("hook_failed", `The server hook records.${BEFORE[op]} returned something other than an object: return the ${op === "create" ? "data" : "patch"}, or nothing to keep it.`);
  return out;
}

/** The `after` hook of a record write; answers the row it was given. */
export async function afterRecordHook<R extends RecordRow | undefined>(core: Core, op: Op, auth: TenantAuth, collection: string, row: R, id?: string): Promise<R> {
  const hook = core.serverHooks?.records?.[AFTER[op]];
  if (!hook) return row;
  const ctx = { ...context(auth, collection), ...(row ? { record: toPublicRecord(row) } : { id: id! }) };
  await runHook(core, `records.${AFTER[op]}`, () => (hook as (c: typeof ctx) => unknown)(ctx));
  return row;
}
