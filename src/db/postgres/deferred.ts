/** The synchronous step members of the interface: they are called inside a running transaction, never before start. */
export const SYNC_MEMBERS = new Set(["useInTransaction", "joinInTransaction", "linkStep"]);

/**
 * Repositories whose async methods wait for `ready` (the migrations) on their first calls,
 * so a core can be created synchronously (the CLI, createCore) over a PostgreSQL store
 * whose schema is still being brought up to date. Once ready, calls go straight through.
 */
export function untilReady<T extends object>(repositories: T, ready: Promise<void>): T {
  let isReady = false;
  void ready.then(
    () => (isReady = true),
    () => undefined,
  );
  const wrap = (repo: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(repo).map(([name, member]) => {
        if (typeof member !== "function" || SYNC_MEMBERS.has(name)) return [name, member];
        const fn = member as (...args: unknown[]) => Promise<unknown>;
        return [name, (...args: unknown[]) => (isReady ? fn.apply(repo, args) : ready.then(() => fn.apply(repo, args)))];
      }),
    );
  return Object.fromEntries(Object.entries(repositories).map(([k, repo]) => [k, wrap(repo as Record<string, unknown>)])) as T;
}
