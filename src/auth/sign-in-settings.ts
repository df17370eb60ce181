import * as v from "valibot";

/**
 * The fields of `settings.auth` that switch on the sign-in methods of issue 42 part B.
 * Spread into the app settings schema, beside the other `auth` fields.
 */
export const SIGN_IN_SETTINGS = {
  /** Email codes and magic links as a sign-in method. */
  emailSignIn: v.optional(v.boolean(), false),
  /** POST /auth/anonymous gives tenants without an email. */
  anonymous: v.optional(v.boolean(), false),
  /** Anonymous tenants without a sign-in or refresh for this many days are deleted with their data. */
  anonymousIdleDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650)), 30),
};
