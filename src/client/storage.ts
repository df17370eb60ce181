/**
 * Where the client keeps the session. Anything with these three methods works, sync or
 * async: `localStorage`, React Native's AsyncStorage, a cookie wrapper, a server-side map.
 */
export interface ClientStorage {
  getItem(key: string): string | null | undefined | Promise<string | null | undefined>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
  /** Optional: calls `listener` when another context (tab) changes `key`. */
  subscribe?(key: string, listener: () => void): () => void;
}

/** Kept in memory only: gone on reload. The default where no `localStorage` exists. */
export function memoryStorage(): ClientStorage {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

/** The browser's `localStorage`, shared by every tab of the origin (and told of their changes). */
export function localStorageAdapter(store: Storage = globalThis.localStorage): ClientStorage {
  return {
    getItem: (key) => store.getItem(key),
    setItem: (key, value) => store.setItem(key, value),
    removeItem: (key) => store.removeItem(key),
    subscribe(key, listener) {
      const target = globalThis as unknown as Partial<Pick<Window, "addEventListener" | "removeEventListener">>;
      if (!target.addEventListener || !target.removeEventListener) return () => {};
      const onStorage = (e: StorageEvent) => {
        if (e.key === key || e.key === null) listener();
      };
      target.addEventListener("storage", onStorage);
      return () => target.removeEventListener!("storage", onStorage);
    },
  };
}
