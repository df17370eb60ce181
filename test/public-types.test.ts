import { describe, expect, expectTypeOf, it } from "vitest";
import * as tenantd from "../src/index.ts";
import type { DataRecord, Entitlements, FileInfo, FindResult, PlanInfo, ShareToken, Subscription, Tenant, UsageCounter, WebhookEnvelope } from "../src/index.ts";
import type { toPublicTenant } from "../src/auth/tenant-view.ts";
import type { listRecords, PublicRecord } from "../src/data/records.ts";
import type { toFileInfo } from "../src/files/service.ts";
import type { PublicShareToken } from "../src/data/share.ts";
import type { Subscription as ServerSubscription, Entitlements as ServerEntitlements } from "../src/billing/effective.ts";
import type { toPlanInfo } from "../src/billing/plans.ts";
import type { UsageCounter as ServerUsageCounter } from "../src/billing/usage.ts";
import type { EventEnvelope } from "../src/webhooks/sign.ts";

// The exported resource types are the server's own shapes: these fail to compile (npm test
// runs tsc over test/) when a field is added, dropped or retyped on one side only.
describe("public resource types", () => {
  it("match what the server builds", () => {
    expectTypeOf<ReturnType<typeof toPublicTenant>>().toEqualTypeOf<Tenant>();
    expectTypeOf<PublicRecord>().toEqualTypeOf<DataRecord>();
    expectTypeOf<Awaited<ReturnType<typeof listRecords>>>().toEqualTypeOf<FindResult>();
    expectTypeOf<ReturnType<typeof toFileInfo>>().toEqualTypeOf<FileInfo>();
    expectTypeOf<PublicShareToken>().toEqualTypeOf<ShareToken>();
    expectTypeOf<ServerSubscription>().toEqualTypeOf<Subscription>();
    expectTypeOf<ServerEntitlements>().toEqualTypeOf<Entitlements>();
    expectTypeOf<ReturnType<typeof toPlanInfo>>().toEqualTypeOf<PlanInfo>();
    expectTypeOf<ServerUsageCounter>().toEqualTypeOf<UsageCounter>();
    expectTypeOf<EventEnvelope>().toEqualTypeOf<WebhookEnvelope>();
  });

  it("exports the embedding API and the error catalogue at runtime", () => {
    expect(typeof tenantd.createTenantBackend).toBe("function");
    expect(typeof tenantd.toNodeHandler).toBe("function");
    expect(typeof tenantd.attachJsonClientErrors).toBe("function");
    expect(tenantd.ERROR_CODES).toMatchObject({ invalid_request: 400, not_found: 404, limit_reached: 402, internal_error: 500 });
  });
});
