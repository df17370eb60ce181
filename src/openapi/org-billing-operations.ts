import * as v from "valibot";
import type { Operation } from "./operations.ts";
import * as s from "./schemas.ts";
import { AdminOrg, OrgSeats } from "./org-operations.ts";
import { PortalBody } from "../billing/checkout.ts";
import { GiftBody, TrialBody } from "../billing/grants.ts";
import { IncrementBody, UsageQuery } from "../billing/usage.ts";
import { OrgCheckoutBody, SeatsBody } from "../orgs/billing.ts";

const obj = v.strictObject;
const billing = "/api/v1/orgs/:orgId/billing";
const admin = "/api/v1/admin/apps/:appId/orgs/:orgId/billing";

const OrgSubscription = obj({ ...s.Subscription.entries, seats: v.nullable(v.number()) });
const UsageRows = v.array(obj({ featureKey: v.string(), period: v.picklist(["monthly", "daily"]), count: v.number(), limit: v.nullable(v.number()) }));
export const OrgBillingReply = obj({ subscription: v.nullable(OrgSubscription), entitlements: s.Entitlements, seats: OrgSeats, usage: UsageRows });
const Source = s.TenantBilling.entries.sources.item;
export const AdminOrgBillingReply = obj({
  org: AdminOrg,
  ...OrgBillingReply.entries,
  sources: v.array(obj({ ...Source.entries, seats: v.nullable(v.number()) })),
  stripeCustomerId: v.nullable(v.string()),
});

const NOTE = "An organization the tenant is not a member of answers 404; buying, the portal and seats need the billing.manage permission (403 otherwise).";
const SEATS = "Paid seats are the Stripe subscription's quantity. Past them a join or an email invite is 402 `limit_reached`, unless `settings.orgs.seatBilling` is `auto`: then a join buys its seat and a leave gives it back.";

/** Billing per organization (docs/organizations.md#billing) and the developer's side of it. */
export const ORG_BILLING_OPERATIONS: Operation[] = [
  { method: "GET", path: billing, tag: "orgs", summary: "The organization's subscription, entitlements, seats and this period's usage (any member)", security: "tenant", responses: { 200: OrgBillingReply }, errors: ["not_found"], description: NOTE },
  { method: "POST", path: `${billing}/checkout`, tag: "orgs", summary: "Start a checkout of a plan for `seats` seats (default: the seats in use)", security: "tenant", body: OrgCheckoutBody, responses: { 200: s.UrlReply },
    errors: ["not_found", "forbidden", "conflict", "invalid_redirect", "provider_error"], description: `${NOTE} ${SEATS}` },
  { method: "POST", path: `${billing}/portal`, tag: "orgs", summary: "Open the organization's billing portal", security: "tenant", body: PortalBody, responses: { 200: s.UrlReply },
    errors: ["not_found", "forbidden", "conflict", "invalid_redirect", "provider_error", "reauthentication_required", "impersonation_read_only"], description: NOTE },
  { method: "PUT", path: `${billing}/seats`, tag: "orgs", summary: "Set the paid seats (the subscription's quantity); never below the seats in use", security: "tenant", body: SeatsBody, responses: { 200: OrgBillingReply },
    errors: ["not_found", "forbidden", "conflict", "provider_error"], description: `${NOTE} ${SEATS}` },
  { method: "GET", path: `${billing}/usage/:featureKey`, tag: "orgs", summary: "The organization's usage of a feature this period (any member)", security: "tenant", query: UsageQuery, responses: { 200: s.Usage }, errors: ["not_found"] },
  { method: "POST", path: `${billing}/usage/:featureKey/increment`, tag: "orgs", summary: "Count usage against the organization (atomic; 402 past its limit)", security: "tenant", body: IncrementBody, responses: { 200: s.Usage }, errors: ["not_found", "limit_reached"] },
  { method: "GET", path: admin, tag: "admin", summary: "An organization's billing: every source, seats, entitlements, usage", security: "developer", responses: { 200: AdminOrgBillingReply } },
  { method: "POST", path: `${admin}/gift`, tag: "admin", summary: "Gift a plan to an organization", security: "developer", body: GiftBody, responses: { 200: AdminOrgBillingReply } },
  { method: "DELETE", path: `${admin}/gift`, tag: "admin", summary: "Take an organization's gift back", security: "developer", responses: { 204: "empty" } },
  { method: "POST", path: `${admin}/trial`, tag: "admin", summary: "Grant an organization a trial", security: "developer", body: TrialBody, responses: { 200: AdminOrgBillingReply } },
  { method: "DELETE", path: `${admin}/trial`, tag: "admin", summary: "End an organization's trial now", security: "developer", responses: { 204: "empty" } },
];
