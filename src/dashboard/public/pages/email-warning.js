import { html } from "../vendor/preact-htm.js";

/**
 * Setups in which verification and password-reset emails reach nobody, said where they are
 * made (Settings and Webhooks). `hasWebhook`: whether the app has a webhook URL.
 */
export function EmailDeliveryWarning({ app, devMode, hasWebhook }) {
  const sendEmail = app.settings.email?.sendEmail !== false;
  if (!sendEmail && !hasWebhook) {
    return html`<div class="warn" role="note" data-testid="email-warning">
      <strong>Verification emails are lost.</strong> Your app sends its own email, so the verification link reaches it only in the
      <code>tenant.email.resend_verification</code> webhook event, and this app has no webhook URL: the events are dropped.
      Set a URL on the <a href=${`#/apps/${app.id}/webhooks`}>Webhooks</a> tab, or let tenantd send email (<a href=${`#/apps/${app.id}/settings`}>Settings</a> → Email).
    </div>`;
  }
  if (sendEmail && devMode) {
    return html`<div class="warn" role="note" data-testid="email-warning">
      <strong>Emails go to the development outbox.</strong> No verification or reset email leaves this server: read them on the
      <a href=${`#/apps/${app.id}/outbox`}>Outbox</a> tab. Configure SMTP before real people sign up.
    </div>`;
  }
  return null;
}
