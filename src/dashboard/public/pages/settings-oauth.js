import { html } from "../vendor/preact-htm.js";
import { Field, FieldError, CopyButton, lines } from "../ui.js";
import { Section } from "./settings.js";

const PROVIDERS = ["google", "github", "apple", "microsoft", "facebook", "discord", "twitter"];
const REDACTED = "[encrypted]";

/** Social login: the redirect allow-list and each provider's client. Secrets are write-only. */
export function OAuthSettings({ app, publicUrl, onSaved }) {
  const oauth = app.settings.oauth ?? {};
  const providers = oauth.providers ?? {};
  const build = (f) => {
    const out = {};
    for (const p of PROVIDERS) {
      const clientId = (f.get(`${p}.clientId`) || "").toString().trim();
      const secret = (f.get(`${p}.clientSecret`) || "").toString().trim();
      if (!clientId) {
        if (providers[p]) out[p] = null;
        continue;
      }
      // A client id alone cannot sign anyone in (Apple signs with a key set through the API instead).
      if (!secret && p !== "apple" && providers[p]?.clientSecret !== REDACTED) throw new FieldError(`${p}.clientSecret`, `${p}: enter the client secret too; a client id without its secret cannot sign anyone in.`);
      out[p] = { enabled: f.get(`${p}.enabled`) === "on", clientId, ...(secret ? { clientSecret: secret } : {}) };
    }
    return { oauth: { redirectUrls: lines(f.get("redirectUrls")), providers: out } };
  };
  return html`<${Section} app=${app} id="s-oauth" title="Social login" onSaved=${onSaved} build=${build}
      note="A provider is on when it has a client id. Client secrets are write-only: blank keeps the stored one. Apple's key fields are set through the API or CLI.">
    <${Field} label="Allowed redirect URLs" hint="One per line: where a sign-in may return to."><textarea name="redirectUrls" rows="3">${(oauth.redirectUrls ?? []).join("\n")}</textarea><//>
    <div class="grid">
      ${PROVIDERS.map((p) => {
        const cfg = providers[p] ?? {};
        const callback = `${publicUrl}/api/v1/auth/oauth/${p}/callback`;
        return html`<fieldset key=${p} class="provider">
          <legend>${p}</legend>
          <label class="check"><input type="checkbox" name=${`${p}.enabled`} checked=${Boolean(cfg.clientId) && cfg.enabled !== false} /> Enabled</label>
          <p class="muted small">Callback URL to register with ${p}: <code data-testid=${`callback-${p}`}>${callback}</code> <${CopyButton} text=${callback} what=${`${p} callback URL`} /></p>
          <${Field} label=${`${p} client id`}><input name=${`${p}.clientId`} value=${cfg.clientId ?? ""} autocomplete="off" /><//>
          <${Field} label=${`${p} client secret`}><input name=${`${p}.clientSecret`} type="password" autocomplete="off" placeholder=${cfg.clientSecret === REDACTED ? "•••••• (set)" : ""} /><//>
        </fieldset>`;
      })}
    </div>
  <//>`;
}
