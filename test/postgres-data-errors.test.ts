import { describe, expect, it } from "vitest";
import { afterThisTest, expectError, signupTenant, startBackend } from "./_helpers.ts";
import { knownStoreUrl } from "./_postgres.ts";
import { connectPostgres } from "../src/db/postgres/connection.ts";

describe("PostgreSQL data errors (issue 39 item 7)", () => {
  it("a data exception (SQLSTATE 22xxx) the input checks do not know of is 400 invalid_request, not a 500; other database errors stay 500", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const sql = connectPostgres((await knownStoreUrl(t.dataDir))!, { max: 1 });
    // Stands in for any value the database refuses that no check of tenantd's foresaw.
    await sql.unsafe(`
      CREATE FUNCTION refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.data LIKE '%out-of-range%' THEN RAISE EXCEPTION 'value out of range' USING ERRCODE = '22003'; END IF;
        IF NEW.data LIKE '%server-fault%' THEN RAISE EXCEPTION 'a fault' USING ERRCODE = 'XX000'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_marked BEFORE INSERT ON records FOR EACH ROW EXECUTE FUNCTION refuse_marked()`);
    afterThisTest(async () => {
      await sql.unsafe("DROP TRIGGER refuse_marked ON records; DROP FUNCTION refuse_marked()");
      await sql.end({ timeout: 5 });
    });
    const refused = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { v: "out-of-range" } } });
    expectError(refused, 400, "invalid_request");
    expect(refused.body.message).toContain("22003");
    expectError(await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { v: "server-fault" } } }), 500, "internal_error");
    expect((await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { v: "fine" } } })).status).toBe(201);
  });
});
