import { TenantdError } from "./errors.ts";
import { defaultLocks, withStorageLock, type LockManagerLike } from "./lock.ts";
import { localStorageAdapter, memoryStorage, type ClientStorage } from "./storage.ts";
import type { Session, TokenPair } from "./types.ts";
import type { CredentialsContainerLike } from "./mfa.ts";

export interface ClientOptions {
  /** tenantd's base URL, e.g. https://api.example.com */
  url: string;
  /** The app id (app_…), sent as x-service-app beside the tenant's token. */
  appId: string;
  /** The app's publishable key (pk_…), sent as x-service-key. */
  key: string;
  /** Where the session is kept. Default: localStorage where it exists, else memory. */
  storage?: ClientStorage;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /**
   * Cross-context lock for refreshes. Default: `navigator.locks` where it exists, else a
   * protocol over `storage`. `false` keeps single-flight within this client only.
   */
  locks?: LockManagerLike | false;
  /**
   * Where a social login in progress keeps its random state until the browser returns.
   * Default: `sessionStorage` (this tab only) where it exists, else memory. Synchronous.
   */
  flowStorage?: FlowStorage;
  /** What creates and uses passkeys. Default: `navigator.credentials`. */
  credentials?: CredentialsContainerLike;
}

/** A synchronous key-value store, as `sessionStorage` is. */
export type FlowStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

function defaultFlowStorage(): FlowStorage {
  try {
    // Reading it throws in a sandboxed frame; such a page keeps the flow in memory.
    if (typeof globalThis.sessionStorage === "object" && globalThis.sessionStorage) return globalThis.sessionStorage;
  } catch {
    // fall through
  }
  const items = new Map<string, string>();
  return { getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, v), removeItem: (k) => void items.delete(k) };
}

/**
 * What the app is told: `SIGNED_IN`, `TOKEN_REFRESHED`, `SIGNED_OUT` (asked for here or in
 * another tab), and `SESSION_ENDED` when the server refused the session (a refresh token
 * reused or unknown, a session ended by logout elsewhere, password reset or deletion): the
 * client has signed out and the person must sign in again. `error` says why.
 */
export type AuthEvent = "SIGNED_IN" | "TOKEN_REFRESHED" | "SIGNED_OUT" | "SESSION_ENDED";
export type AuthListener = (event: AuthEvent, session: Session | null, error?: TenantdError) => void;

export interface RequestOptions {
  /** "key": the publishable key; "tenant": the session's bearer (refreshed once on expiry). */
  auth?: "none" | "key" | "tenant";
  body?: unknown;
  form?: FormData;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** Resolve to the reply itself (a download), not its JSON; an error reply still throws. */
  raw?: boolean;
}

export type Core = ReturnType<typeof createCore>;

const REQUIRED: Record<"url" | "appId" | "key", string> = {
  url: "where tenantd runs, e.g. https://api.example.com",
  appId: "the app's id (app_…, from `tenantd app show`)",
  key: "the app's publishable key (pk_…, from `tenantd app show`)",
};
// Names people reach for from other clients, and the option each one is here.
const RENAMED: Record<string, string> = { baseUrl: "url", baseURL: "url", endpoint: "url", publishableKey: "key", apiKey: "key", app: "appId" };

/** A plain JavaScript caller gets told which option is missing or misnamed, not a TypeError from inside. */
function checkOptions(options: ClientOptions): void {
  if (typeof options !== "object" || options === null) throw new TypeError("createClient({ url, appId, key }): pass an options object.");
  for (const [name, what] of Object.entries(REQUIRED)) {
    const value = options[name as keyof typeof REQUIRED];
    if (typeof value === "string" && value !== "") continue;
    const alias = Object.keys(RENAMED).find((k) => RENAMED[k] === name && k in options);
    throw new TypeError(`createClient: \`${name}\` is required, ${what}${alias ? ` (it is called \`${name}\` here, not \`${alias}\`)` : ""}.`);
  }
}

export function createCore(options: ClientOptions) {
  checkOptions(options);
  const base = options.url.replace(/\/+$/, "");
  const storage = options.storage ?? (typeof globalThis.localStorage === "object" ? localStorageAdapter() : memoryStorage());
  const fetchFn = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const sessionKey = `tenantd.${options.appId}.session`;
  const flowStorage = options.flowStorage ?? defaultFlowStorage();
  const lockName = `tenantd.${options.appId}.refresh`;
  const locks = options.locks ?? defaultLocks();
  const withLock = <T>(fn: () => Promise<T>): Promise<T> =>
    locks === false ? fn() : locks ? locks.request(lockName, fn) : withStorageLock(storage, `${lockName}-lock`, fn);
  const listeners = new Set<AuthListener>();
  let inflight: Promise<Session> | undefined;

  function emit(event: AuthEvent, session: Session | null, error?: TenantdError) {
    for (const listener of [...listeners]) {
      try {
        listener(event, session, error);
      } catch {
        // One app callback that throws must not stop the others or the request.
      }
    }
  }

  async function getSession(): Promise<Session | null> {
    try {
      const raw = await storage.getItem(sessionKey);
      const s = raw ? (JSON.parse(raw) as Partial<Session>) : null;
      return s && typeof s.accessToken === "string" && typeof s.refreshToken === "string" ? (s as Session) : null;
    } catch {
      return null;
    }
  }

  async function setSession(session: Session | null, event: AuthEvent, error?: TenantdError) {
    if (session) await storage.setItem(sessionKey, JSON.stringify(session));
    else await storage.removeItem(sessionKey);
    emit(event, session, error);
  }

  async function send(method: string, path: string, o: RequestOptions, accessToken?: string): Promise<Response> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.auth === "key") headers["x-service-key"] = options.key;
    if (o.auth === "tenant" && accessToken) {
      headers.authorization = `Bearer ${accessToken}`;
      headers["x-service-app"] = options.appId;
    }
    let body: BodyInit | undefined = o.form;
    if (o.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(o.body);
    }
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) query.set(k, String(v));
    const qs = query.toString();
    try {
      return await fetchFn(`${base}${path}${qs ? `?${qs}` : ""}`, { method, headers, body });
    } catch (cause) {
      throw new TenantdError(0, "network_error", `Could not reach tenantd at ${base}: ${(cause as Error)?.message ?? cause}`, { cause });
    }
  }

  async function errorOf(res: Response): Promise<TenantdError> {
    const body = (await res.json().catch(() => null)) as { error?: unknown; message?: unknown } | null;
    return typeof body?.error === "string"
      ? new TenantdError(res.status, body.error, typeof body.message === "string" ? body.message : body.error)
      : new TenantdError(res.status, "unexpected_response", `tenantd answered HTTP ${res.status} without an error body (a proxy in between?).`);
  }

  async function read<T>(res: Response, raw = false): Promise<T> {
    if (!res.ok) throw await errorOf(res);
    if (raw) return res as T;
    if (res.status === 204) return undefined as T;
    return (await res.json()) as T;
  }

  /** The server refused the session: forget it and tell the app. */
  async function endSession(error: TenantdError): Promise<never> {
    await setSession(null, "SESSION_ENDED", error);
    throw error;
  }

  /**
   * Rotates the refresh token, once for every request that found `stale` expired: one
   * rotation per page (a shared promise) and per origin (a lock, then a re-read of storage:
   * a session another tab already refreshed is taken as is). A rotated refresh token is
   * never presented twice, so the server's reuse detection never ends a healthy session.
   */
  function refresh(stale: string): Promise<Session> {
    inflight ??= (async () => {
      try {
        return await withLock(() => refreshLocked(stale));
      } finally {
        inflight = undefined;
      }
    })();
    return inflight;
  }

  async function refreshLocked(stale: string): Promise<Session> {
    const current = await getSession();
    if (!current) throw new TenantdError(401, "unauthorized", "Signed out while the request ran: sign in again.");
    if (current.accessToken !== stale) return current;
    const res = await send("POST", "/api/v1/auth/refresh", { auth: "key", body: { refreshToken: current.refreshToken } });
    if (res.status === 401) return endSession(await errorOf(res));
    const pair = await read<TokenPair>(res);
    const next: Session = { ...current, accessToken: pair.accessToken, refreshToken: pair.refreshToken };
    await setSession(next, "TOKEN_REFRESHED");
    return next;
  }

  async function request<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    if (o.auth !== "tenant") return read<T>(await send(method, path, o));
    const session = await getSession();
    let res = await send(method, path, o, session?.accessToken);
    if (res.status === 401 && session) {
      const error = await errorOf(res);
      if (error.code === "session_ended") return endSession(error);
      if (error.code !== "token_expired") throw error;
      const next = await refresh(session.accessToken);
      res = await send(method, path, o, next.accessToken);
    }
    return read<T>(res, o.raw);
  }

  return {
    base,
    options,
    storage,
    sessionKey,
    flowStorage,
    listeners,
    emit,
    request,
    getSession,
    setSession,
  };
}
