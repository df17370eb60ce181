import { html, useState } from "../vendor/preact-htm.js";
import { api } from "../api.js";
import { useLoad, Loaded, Confirm, Notice, fmtDate } from "../ui.js";

const yesNo = (on, yes, no) => (on ? yes : html`<span class="muted">${no}</span>`);

/**
 * How a tenant signs in, and the two repairs a support desk is asked for: a lost phone
 * (reset two-factor authentication) and a lost device (remove a passkey). `signInDisabledAt`
 * comes from the page's overview, which already knows it.
 */
export function SignInMethodsCard({ base, signInDisabledAt }) {
  const state = useLoad(() => api("GET", `${base}/sign-in-methods`), [base]);
  const [confirm, setConfirm] = useState(null);
  const [notice, setNotice] = useState(null);
  const done = (message) => {
    setConfirm(null);
    setNotice(message);
    state.reload();
  };
  const resetMfa = async () => {
    await api("DELETE", `${base}/mfa`);
    done("Two-factor authentication reset: the tenant signs in without a code and can set it up again.");
  };
  const removePasskey = async () => {
    await api("DELETE", `${base}/passkeys/${encodeURIComponent(confirm.passkey.id)}`);
    done(`Passkey “${confirm.passkey.name}” removed.`);
  };
  return html`<div class="card">
    <h2>Sign-in methods</h2>
    <${Loaded} state=${state}>${(m) => html`
      <dl class="facts" data-testid="sign-in-methods">
        <dt>Password</dt><dd>${yesNo(m.password, "Set", "Not set")}</dd>
        <dt>Two-factor (TOTP)</dt><dd data-testid="totp">${m.totp ? `On, ${m.recoveryCodesLeft} recovery code${m.recoveryCodesLeft === 1 ? "" : "s"} left` : html`<span class="muted">Off</span>`}</dd>
        <dt>Social accounts</dt><dd>${m.providers.length ? m.providers.map((p) => `${p.provider}${p.email ? ` (${p.email})` : ""}`).join(", ") : html`<span class="muted">None linked</span>`}</dd>
        <dt>Anonymous</dt><dd>${m.anonymous ? "Yes: no email yet" : "No"}</dd>
        <dt>Sign-in</dt><dd>${signInDisabledAt ? html`<span class="badge status-failed">Turned off</span> since ${fmtDate(signInDisabledAt)}` : "Allowed"}</dd>
      </dl>
      ${m.totp ? html`<div class="row"><button type="button" class="danger" onClick=${() => setConfirm({ kind: "mfa" })}>Reset MFA…</button></div>` : null}
      <h3>Passkeys</h3>
      ${m.passkeys.length === 0
        ? html`<p class="empty">No passkeys.</p>`
        : html`<div class="table-wrap"><table data-testid="passkeys"><caption class="sr-only">Passkeys</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>${m.passkeys.map(
              (p) => html`<tr key=${p.id}><td>${p.name}</td><td>${fmtDate(p.createdAt)}</td><td>${p.lastUsedAt ? fmtDate(p.lastUsedAt) : "Never"}</td>
                <td><button type="button" class="small danger" aria-label=${`Remove passkey ${p.name}`} onClick=${() => setConfirm({ kind: "passkey", passkey: p })}>Remove</button></td></tr>`,
            )}</tbody></table></div>`}
    `}<//>
    <${Notice}>${notice}<//>
    ${confirm?.kind === "mfa"
      ? html`<${Confirm} title="Reset two-factor authentication?" action="Reset MFA"
          body="The tenant's authenticator app and recovery codes stop working: they sign in with their other methods alone until they set up two-factor authentication again. They get an email about it, and your webhook a tenant.security event."
          onConfirm=${resetMfa} onCancel=${() => setConfirm(null)} />`
      : null}
    ${confirm?.kind === "passkey"
      ? html`<${Confirm} title=${`Remove the passkey “${confirm.passkey.name}”?`} action="Remove passkey"
          body="That device can no longer sign in to this account; their other passkeys and methods keep working. They get an email about it, and your webhook a tenant.security event."
          onConfirm=${removePasskey} onCancel=${() => setConfirm(null)} />`
      : null}
  </div>`;
}
