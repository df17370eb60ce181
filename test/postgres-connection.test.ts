import { describe, expect, it } from "vitest";
import { afterThisTest, signupTenant, startBackend } from "./_helpers.ts";
import { knownStoreUrl } from "./_postgres.ts";
import { connectPostgres } from "../src/db/postgres/connection.ts";

describe("PostgreSQL connections", () => {
  it("run without parallel workers (a worker's start costs more than a backend's short statements), unless the database URL asks for them", async () => {
    const t = await startBackend();
    await signupTenant(t);
    const url = (await knownStoreUrl(t.dataDir))!;
    const plain = connectPostgres(url, { max: 1 });
    const asked = connectPostgres(`${url}${url.includes("?") ? "&" : "?"}max_parallel_workers_per_gather=2`, { max: 1 });
    afterThisTest(() => Promise.all([plain.end({ timeout: 5 }), asked.end({ timeout: 5 })]));
    expect((await plain`SHOW max_parallel_workers_per_gather`)[0]).toEqual({ maxParallelWorkersPerGather: "0" });
    expect((await asked`SHOW max_parallel_workers_per_gather`)[0]).toEqual({ maxParallelWorkersPerGather: "2" });
  });
});
