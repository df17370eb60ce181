import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useAction, useLoad, ErrorNote, Field, PageTitle, CopyButton, lines } from "../ui.js";
import { EmailDeliveryWarning } from "./email-warning.js";
import { CollectionsSettings } from "./settings-collections.js";
import { OAuthSettings } from "./settings-oauth.js";
import { QuotaSettings, DefaultEntitlementSettings, TrialSettings } from "./settings-limits.js";

/** A settings section: its own form, saved as one JSON merge patch of the app's settings. */
export function Section({ app, title, id, build, onSaved, children, note }) {
  const save = useAction();
  const [saved, setSaved] = useState(false);
  const submit = (e) => {
    e.preventDefault();
    setSaved(false);
    save.run(async () => {
      await api("PATCH", `admin/apps/${app.id}`, { settings: build(new FormData(e.target)) });
      setSaved(true);
      onSaved();
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby=${id}>
    <h2 id=${id}>${title}</h2>
    ${note ? html`<p class="muted">${note}</p>` : null}
    ${children}
    <${ErrorNote} error=${save.error} />
    <div class="row"><button type="submit" class="primary" disabled=${save.busy}>Save ${title.toLowerCase()}</button>${saved ? html`<span role="status" class="ok">Saved</span>` : null}</div>
  </form>`;
}

const REDACTED = "[encrypted]";
/** A write-only secret: blank keeps the stored one. */
const secretField = (value) => (value ? value : undefined);

export function SettingsPage({ app, session, onSaved }) {
  const s = app.settings;
  const email = s.email ?? {};
  const billing = s.billing ?? {};
  const str = (f, k) => (f.get(k) || "").toString().trim() || null;
  const webhook = useLoad(() => api("GET", `admin/apps/${app.id}/event-webhook-config`), [app.id]);
  const stripeEndpoint = `${session.publicUrl}/api/v1/billing/stripe/webhook/${app.id}`;
  return html`<div class="stack">
    <${PageTitle} title=${`Settings · ${app.name}`}>Settings<//>
    ${webhook.data ? html`<${EmailDeliveryWarning} app=${app} devMode=${session.devMode} hasWebhook=${Boolean(webhook.data.url)} />` : null}
    <${Section} app=${app} id="s-access" title="Access" onSaved=${onSaved} build=${(f) => ({ corsOrigins: lines(f.get("corsOrigins")), signupMode: f.get("signupMode") })}>
      <${Field} label="CORS origins" hint="One per line, like https://app.example.com (or * for any)."><textarea name="corsOrigins" rows="3">${(s.corsOrigins ?? []).join("\n")}</textarea><//>
      <${Field} label="Sign-up mode">
        <select name="signupMode" value=${s.signupMode ?? "open"}>
          <option value="open">Open: anyone can sign up</option>
          <option value="invite_only">Invite only: an invite token or family invite is needed</option>
          <option value="closed">Closed: no new sign-ups</option>
        </select>
      <//>
    <//>
    <${Section} app=${app} id="s-email" title="Email" onSaved=${onSaved}
      build=${(f) => ({ email: { sendEmail: f.get("sendEmail") === "on", from: str(f, "from"), appName: str(f, "appName"), verifyUrl: str(f, "verifyUrl"), resetUrl: str(f, "resetUrl") } })}>
      <label class="check"><input type="checkbox" name="sendEmail" checked=${email.sendEmail !== false} /> tenantd sends verification and reset emails (off: your app delivers them from the webhook)</label>
      <${Field} label="From"><input name="from" value=${email.from ?? ""} placeholder="My App <no-reply@example.com>" /><//>
      <${Field} label="App name in emails"><input name="appName" value=${email.appName ?? ""} /><//>
      <${Field} label="Verification link" hint="Must contain {token}."><input name="verifyUrl" value=${email.verifyUrl ?? ""} placeholder="https://app.example.com/verify?token={token}" /><//>
      <${Field} label="Password reset link" hint="Must contain {token}."><input name="resetUrl" value=${email.resetUrl ?? ""} placeholder="https://app.example.com/reset?token={token}" /><//>
    <//>
    <${CollectionsSettings} app=${app} onSaved=${onSaved} />
    <${OAuthSettings} app=${app} publicUrl=${session.publicUrl} onSaved=${onSaved} />
    <${Section} app=${app} id="s-stripe" title="Stripe" onSaved=${onSaved} note="Write-only: stored encrypted and never shown again. Leave a field blank to keep the stored value."
      build=${(f) => ({ billing: { stripeSecretKey: secretField(str(f, "stripeSecretKey")), stripeWebhookSecret: secretField(str(f, "stripeWebhookSecret")) } })}>
      <p>Webhook endpoint to add in Stripe (Developers → Webhooks): <code data-testid="stripe-endpoint">${stripeEndpoint}</code> <${CopyButton} text=${stripeEndpoint} what="Stripe webhook endpoint" /></p>
      <${Field} label="Stripe secret key" hint=${billing.stripeSecretKey === REDACTED ? "A key is set." : "Not set: the development billing provider is used."}>
        <input name="stripeSecretKey" type="password" autocomplete="off" placeholder=${billing.stripeSecretKey === REDACTED ? "•••••• (set)" : "sk_live_…"} />
      <//>
      <${Field} label="Stripe webhook signing secret" hint=${billing.stripeWebhookSecret === REDACTED ? "A secret is set." : "Not set."}>
        <input name="stripeWebhookSecret" type="password" autocomplete="off" placeholder=${billing.stripeWebhookSecret === REDACTED ? "•••••• (set)" : "whsec_…"} />
      <//>
    <//>
    <${QuotaSettings} app=${app} onSaved=${onSaved} />
    <${DefaultEntitlementSettings} app=${app} onSaved=${onSaved} />
    <${TrialSettings} app=${app} onSaved=${onSaved} />
  </div>`;
}
