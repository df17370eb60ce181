import { signupTenant, startBackend, type ReqOptions, type TestBackend, type TestTenant } from "./_helpers.ts";

type Bearer = { bearer: TestTenant["bearer"] };

export interface ListParams {
  /** an object is sent as JSON; a string is sent as is */
  filter?: unknown;
  sort?: unknown;
  limit?: string | number;
  offset?: string | number;
  after?: string;
}

export function listPath(collection: string, params: ListParams = {}): string {
  const q = new URLSearchParams();
  for (const key of ["filter", "sort", "limit", "offset", "after"] as const) {
    const value = params[key];
    if (value === undefined) continue;
    q.set(key, typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value));
  }
  const s = q.toString();
  return `/api/v1/data/${collection}${s ? `?${s}` : ""}`;
}

/** The data endpoints as one tenant calls them. */
export function dataClient(t: TestBackend, who: Bearer) {
  const send = (method: string, path: string, opts: ReqOptions = {}) => t.request(method, path, { bearer: who.bearer, ...opts });
  return {
    create: (collection: string, data: unknown) => send("POST", `/api/v1/data/${collection}`, { body: { data } }),
    list: (collection: string, params?: ListParams) => send("GET", listPath(collection, params)),
    get: (collection: string, id: string) => send("GET", `/api/v1/data/${collection}/${id}`),
    update: (collection: string, id: string, data: unknown) => send("PUT", `/api/v1/data/${collection}/${id}`, { body: { data } }),
    remove: (collection: string, id: string) => send("DELETE", `/api/v1/data/${collection}/${id}`),
    upsert: (collection: string, data: unknown) => send("POST", `/api/v1/data/${collection}/upsert`, { body: { data } }),
    share: (collection: string, id: string, body: unknown = {}) => send("POST", `/api/v1/data/${collection}/${id}/share`, { body }),
    revoke: (collection: string, id: string) => send("DELETE", `/api/v1/data/${collection}/${id}/share`),
    shared: (token: string) => t.request("GET", `/api/v1/public/shared/${token}`),
    /** creates each record in order and returns their ids */
    async seed(collection: string, rows: unknown[]): Promise<string[]> {
      const ids: string[] = [];
      for (const data of rows) {
        const res = await this.create(collection, data);
        if (res.status !== 201) throw new Error(`seed failed: ${res.status} ${res.text}`);
        ids.push(res.body.record.id);
        t.clock.advance(1000);
      }
      return ids;
    },
  };
}

export type DataClient = ReturnType<typeof dataClient>;

/** A backend whose default app has the given collection settings, and one signed-up tenant. */
export async function dataBackend(collections: Record<string, { unique?: string[]; indexed?: string[]; search?: { language?: "simple" | "en" | "es" | "nl" } }> = {}) {
  const t = await startBackend();
  await t.backend.admin.updateApp(t.app.id, { settings: { collections } });
  const tenant = await signupTenant(t);
  return { t, tenant, api: dataClient(t, tenant) };
}
