import { createClient, memoryStorage, type AuthEvent, type ClientOptions, type ClientStorage, type TenantdError } from "../src/client/index.ts";
import { serveHttp, startBackend, type TestBackend } from "./_helpers.ts";
import type { TenantBackendConfig } from "../src/index.ts";

export const PASSWORD = "correct horse battery";

/** A real tenantd over HTTP, and clients of its default app that count their refreshes. */
export async function clientBackend(config: TenantBackendConfig = {}) {
  const t = await startBackend(config);
  const { url } = await serveHttp(t.backend);
  const refreshes: string[] = [];
  let seq = 0;
  // Answers held back until `count` have arrived, then released together: every client then
  // sees its 401 before any refresh has started, the race a lock must settle.
  let barrier: { match: (url: string) => boolean; count: number; waiting: (() => void)[] } | undefined;
  const holdUntil = (count: number, match: (url: string) => boolean) => void (barrier = { match, count, waiting: [] });
  /** A client over real HTTP; `storage` shared between clients stands for tabs of one origin. */
  const client = (opts: Partial<ClientOptions> & { name?: string } = {}) => {
    const name = opts.name ?? `client${++seq}`;
    const events: { event: AuthEvent; error?: TenantdError }[] = [];
    const c = createClient({
      url,
      appId: t.app.id,
      key: t.app.publishableKey,
      storage: opts.storage ?? memoryStorage(),
      fetch: async (input, init) => {
        if (String(input).endsWith("/api/v1/auth/refresh")) refreshes.push(name);
        const res = await fetch(input, init);
        const b = barrier;
        if (b && b.match(String(input))) {
          await new Promise<void>((release) => {
            b.waiting.push(release);
            if (b.waiting.length >= b.count) {
              barrier = undefined;
              for (const r of b.waiting) r();
            }
          });
        }
        return res;
      },
      ...opts,
    });
    c.auth.onAuthStateChange((event, _session, error) => events.push({ event, error }));
    return Object.assign(c, { events, eventNames: () => events.map((e) => e.event) });
  };
  return { t, url, client, refreshes, holdUntil };
}

export type ClientBackend = Awaited<ReturnType<typeof clientBackend>>;
export type TestClient = ReturnType<ClientBackend["client"]>;

/** The Web Locks API's exclusive mode, in process: what `navigator.locks` gives tabs of one origin. */
export function inProcessLocks() {
  const tails = new Map<string, Promise<unknown>>();
  let granted = 0;
  return {
    get granted() {
      return granted;
    },
    request<T>(name: string, callback: () => Promise<T>): Promise<T> {
      const previous = tails.get(name) ?? Promise.resolve();
      const run = previous.then(() => {
        granted++;
        return callback();
      });
      tails.set(name, run.catch(() => undefined));
      return run;
    },
  };
}

/** A storage that counts its writes of the session key (each rotation is one write). */
export function countingStorage(inner: ClientStorage = memoryStorage()) {
  const writes: string[] = [];
  return {
    writes,
    storage: {
      getItem: (k: string) => inner.getItem(k),
      setItem: (k: string, v: string) => {
        writes.push(k);
        return inner.setItem(k, v);
      },
      removeItem: (k: string) => inner.removeItem(k),
    } satisfies ClientStorage,
  };
}

export type { TestBackend };
