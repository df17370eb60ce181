import * as v from "valibot";

/** Default of `settings.auth.stepUpSeconds`: how recent a sign-in sensitive actions need. */
export const STEP_UP_SECONDS = 600;

/**
 * The MFA, passkey and step-up entries of `settings.auth` (other sign-in methods add their own
 * entries beside these).
 */
export const MFA_AUTH_SETTINGS = {
  /** Every tenant needs a second factor: one without gets a ticket that only allows enrolment. */
  requireMfa: v.optional(v.boolean(), false),
  stepUpSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(30, "must be at least 30 seconds"), v.maxValue(86_400, "must be at most a day (86400)")), STEP_UP_SECONDS),
  passkeys: v.optional(
    v.strictObject({
      enabled: v.optional(v.boolean(), true),
      /** The relying party id; the host of the first of `corsOrigins` when absent. */
      rpId: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9.-]{1,253}$/, "must be a host name like example.com"))),
      /** Shown by the authenticator; the app's name when absent. */
      rpName: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))),
    }),
    {},
  ),
};
