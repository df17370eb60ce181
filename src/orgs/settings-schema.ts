import * as v from "valibot";

/**
 * What a role may do in its organization. Deleting the organization and handing it over are
 * the owners' alone, so no role can be given them.
 */
export const ORG_PERMISSIONS = ["org.update", "members.invite", "members.remove", "members.role", "records.read", "records.write", "billing.manage"] as const;
export type OrgPermission = (typeof ORG_PERMISSIONS)[number];

export const BUILT_IN_ROLES = ["owner", "admin", "member"] as const;
export const ROLE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/** `settings.orgs`: the app's custom roles and the seats of an organization without a plan. */
export const OrgSettingsSchema = v.strictObject({
  roles: v.optional(
    v.record(
      v.pipe(
        v.string(),
        v.regex(ROLE_NAME, "role names are 1-32 lower-case letters, digits, _ or -, starting with a letter"),
        v.check((name) => !(BUILT_IN_ROLES as readonly string[]).includes(name), "owner, admin and member are built in: pick another name"),
      ),
      v.strictObject({ permissions: v.array(v.picklist(ORG_PERMISSIONS, `each permission is one of ${ORG_PERMISSIONS.join(", ")}`)) }),
    ),
    {},
  ),
  /**
   * The page of the app that accepts an invitation, `{token}` replaced by the invite's token
   * (it calls POST /api/v1/orgs/invites/accept, or signs up with it). Email invites need it.
   */
  inviteUrl: v.optional(
    v.pipe(v.string(), v.url("must be a URL"), v.check((s) => /^https?:\/\//.test(s), "must be an http(s) URL"), v.check((s) => s.includes("{token}"), "must contain {token}")),
  ),
  /** Organizations one tenant may own at once (a self-registered tenant cannot make millions); null: no cap. */
  maxOwnedPerTenant: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0))), 100),
  /** Members (owners included) an organization may have; absent: no limit. */
  seats: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  /**
   * What a join past an organization's paid seats does: "fixed" refuses it (402), "auto"
   * buys the seat (the subscription's quantity follows the member count, down too).
   */
  seatBilling: v.optional(v.picklist(["fixed", "auto"], "must be fixed or auto"), "fixed"),
});
