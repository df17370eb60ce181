/**
 * Runs at most `max` tasks at once; the others wait their turn in arrival order. Per process
 * on purpose, also with several nodes: what it bounds (argon2 hashing, files being stored)
 * is this machine's CPU and memory, not a limit users share (scaling.md).
 */
export function createLimiter(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async function limit<T>(task: () => Promise<T>): Promise<T> {
    if (active < max) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, or is freed.
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
