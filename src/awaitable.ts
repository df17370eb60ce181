/**
 * A repository answer: SQLite's come back synchronously, PostgreSQL's as promises.
 *
 * Why not always a promise: on Node 20, the AsyncLocalStorage that carries the request id
 * into log lines installs a promise hook, and each promise a request makes (an async
 * function's result, each await) costs a share of the cheapest endpoints. The bearer guard
 * and the reads it makes run on every request, so they stay synchronous when the store is.
 */
export type Awaitable<T> = T | Promise<T>;

/** `next(value)`: at once when `value` is already there, after it resolves when it is a promise. */
export function andThen<T, R>(value: Awaitable<T>, next: (value: T) => Awaitable<R>): Awaitable<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * `next(value)` at once when `value` is not a promise (any thenable counts: handlers may
 * return one), else once it resolves; `failed(error)` when it rejects.
 */
export function settle<T, R>(value: Awaitable<T>, next: (value: T) => R | Promise<R>, failed: (error: unknown) => R): R | Promise<R> {
  return isThenable(value) ? value.then(next, failed) : next(value);
}

/**
 * Whether `value` is a promise or any other thenable (handlers may return one). Code on every
 * request tests this before making the closures `settle` takes: a synchronous answer then
 * allocates none.
 */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
