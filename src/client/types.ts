import type { InferOutput } from "valibot";
// Type-only: the shapes are the server's own response schemas (the ones the OpenAPI
// document is generated from), so the client and the document cannot disagree. No
// valibot code reaches a bundle.
import type * as S from "../openapi/schemas.ts";

import type * as M from "../openapi/mfa-operations.ts";

type Out<K extends keyof typeof S> = InferOutput<(typeof S)[K]>;
type MfaOut<K extends "MfaChallenge" | "MfaStatus" | "TotpEnrolment" | "Passkey" | "Reauthenticated"> = InferOutput<(typeof M)[K]>;

export type Tenant = Out<"Tenant">;
export type TokenPair = Out<"TokenPair">;
export type AuthReply = Out<"AuthReply">;
export type Introspection = Out<"Introspection">;
export type Subscription = Out<"Subscription">;
export type Entitlements = Out<"Entitlements">;
export type Plan = Out<"Plan">;
export type Usage = Out<"Usage">;
export type FileInfo = Out<"FileInfo">;
export type ShareLink = Out<"ShareReply">["shareToken"];
export type Invite = Out<"Invite">;
export type InviteTokenCreated = Out<"InviteTokenCreated">;
export type InviteTokenList = Out<"InviteTokenList">;
export type InviteQuota = Out<"InviteQuota">;
export type FamilyInviteCreated = Out<"FamilyInviteCreated">;
export type FamilyInviteList = Out<"FamilyInviteList">;
export type FamilyInviteRevoked = Out<"FamilyInviteRevoked">;
export type FamilyMembers = Out<"FamilyMembers">;
export type FamilyConsumed = Out<"FamilyConsumed">;
export type FamilyReplaced = Out<"FamilyReplaced">;
export type LinkedProvider = Out<"LinkedProviders">["providers"][number];
export type WebhookEvent = Out<"WebhookEvent">;
export type ActivityPage = Out<"ActivityPage">;
export type ActivityEntry = Out<"ActivityEntry">;
export type ExportLinkSent = Out<"ExportLinkSent">;

/** A JSON value, as records hold. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A record whose `data` has the shape `T`. */
export type DataRecord<T = JsonObject> = Omit<Out<"DataRecord">, "data"> & { data: T };
export interface RecordList<T = JsonObject> {
  records: DataRecord<T>[];
  total: number;
  limit: number;
  offset: number;
  /** the cursor of the next page: pass it as `after`; absent on the last page */
  next?: string;
}

/** What the client keeps in storage for a signed-in tenant. */
export interface Session {
  accessToken: string;
  refreshToken: string;
  /** The tenant, when the client has seen it (sign-up, sign-in, `me`). */
  tenant?: Tenant;
}

/** One operation of `batch([...])`: the record writes and the usage increment, as their single calls take them. */
export type BatchOperation =
  | { op: "create"; collection: string; data: JsonObject }
  /** a JSON Merge Patch of the record's data, as `update` */
  | { op: "update"; collection: string; id: string; data: JsonObject }
  | { op: "upsert"; collection: string; data: JsonObject }
  | { op: "delete"; collection: string; id: string }
  | { op: "increment"; featureKey: string; by?: number; period?: "monthly" | "daily" };

/** What each operation's single call answers: its status, and that call's body fields. */
export type BatchResult = Out<"BatchResult">;

/** Writes take an idempotency key: a retry with the same key and request within 24 hours gets the first answer and writes nothing. */
export interface WriteOptions {
  idempotencyKey?: string;
}
/** The sign-in step when a second factor is due (`signIn`, `signInWithPasskey`). */
export type MfaChallenge = MfaOut<"MfaChallenge">;
export type MfaStatus = MfaOut<"MfaStatus">;
export type TotpEnrolment = MfaOut<"TotpEnrolment">;
export type Passkey = MfaOut<"Passkey">;
export type Reauthenticated = MfaOut<"Reauthenticated">;
