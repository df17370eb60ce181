import { html, useState } from "../vendor/preact-htm.js";
import { signIn } from "../api.js";
import { ErrorNote, Field, CopyButton, PageTitle } from "../ui.js";

export function SignIn({ session, notice, onSignedIn }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  if (session.firstRun) {
    return html`<main class="narrow card">
      <${PageTitle} title="Welcome to tenantd" />
      <p>No developer account exists yet. Create the first one from a terminal in the server's folder:</p>
      <pre class="command"><code>${session.createDeveloperCommand}</code></pre>
      <${CopyButton} text=${session.createDeveloperCommand} label="Copy command" />
      <p>The password is asked for in the terminal. The first developer owns the apps created so far. Then reload this page and sign in.</p>
      <p class="muted">There is no sign-up page: only someone with access to the server can create developers.</p>
    </main>`;
  }
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(email, password));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="narrow card">
    <${PageTitle} title="Sign in to tenantd" />
    ${notice ? html`<p class="warn" role="status">${notice}</p>` : null}
    <form onSubmit=${submit}>
      <${Field} label="Email"><input type="email" name="email" autocomplete="username" required value=${email} onInput=${(e) => setEmail(e.target.value)} /><//>
      <${Field} label="Password"><input type="password" name="password" autocomplete="current-password" required value=${password} onInput=${(e) => setPassword(e.target.value)} /><//>
      <${ErrorNote} error=${error} field=${error?.code === "invalid_credentials" ? "password" : undefined} />
      <button type="submit" class="primary" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
    </form>
    <p class="muted">Forgot the password? On the server: <code>npx tenantd developer set-password --email you@example.com</code></p>
  </main>`;
}
