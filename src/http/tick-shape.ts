import { executionAsyncResource } from "node:async_hooks";

let kept: object | undefined;

/**
 * Keeps one of Node's `process.nextTick` objects alive for the life of the process.
 *
 * Node builds every tick as `{ [async_id_symbol], [trigger_async_id_symbol], callback, args }`.
 * V8 records the shapes that literal passes through only weakly. A full GC that finds no
 * tick object alive collects them, and V8 runs such GCs on a server that has gone idle.
 * The next tick builds new ones, and V8 marks the literal's property stores megamorphic.
 * From then on, every tick of the process goes through V8's generic runtime path. Five
 * such ticks end each HTTP request, and they cost 8 % of a cheap list request's CPU
 * (docs/performance.md, twelfth round). One live tick object keeps the shapes, and so the
 * fast path. It holds a no-op callback and nothing else.
 */
export function keepTickShape(): void {
  if (kept) return;
  process.nextTick(() => {
    kept ??= executionAsyncResource();
  });
}

/** The tick object kept (tests check that Node still hands one out). */
export const keptTickObject = (): object | undefined => kept;
