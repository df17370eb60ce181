import { html, render, useState, useEffect, useErrorBoundary } from "./vendor/preact-htm.js";
import { getSession, setSignedOutHandler, signOut } from "./api.js";
import { ErrorNote, Loading } from "./ui.js";
import { useRoute } from "./route.js";
import { SignIn } from "./pages/sign-in.js";
import { AppsPage } from "./pages/apps.js";
import { AppLayout } from "./pages/app-layout.js";
import { UsagePage } from "./pages/usage.js";
import { ApiDocsPage } from "./pages/api-docs.js";
import { BackupsPage } from "./pages/backups.js";
import { JobsPage } from "./pages/jobs.js";
import { ViewAsPage } from "./pages/view-as.js";

function skipToMain(e) {
  // The hash holds the route: following href="#main" would navigate away.
  e.preventDefault();
  document.getElementById("main")?.focus();
}

function Shell({ session, onSignedOut }) {
  const route = useRoute();
  const path = route.path;
  const [error, setError] = useState(null);
  const out = async () => {
    try {
      await signOut();
      onSignedOut();
    } catch (e) {
      setError(e);
    }
  };
  // The impersonation tab: its banner and the tenant's view, without the dashboard's navigation.
  if (path[0] === "view-as" && path[1] && path[2]) return html`<main id="main" tabindex="-1" class="view-as-main"><${ViewAsPage} appId=${path[1]} tenantId=${path[2]} /></main>`;
  let page;
  if (path[0] === "apps" && path[1]) page = html`<${AppLayout} appId=${path[1]} route=${path.slice(2)} session=${session} />`;
  else if (path[0] === "usage") page = html`<${UsagePage} />`;
  else if (path[0] === "api") page = html`<${ApiDocsPage} />`;
  else if (path[0] === "backups") page = html`<${BackupsPage} />`;
  else if (path[0] === "jobs") page = html`<${JobsPage} />`;
  else page = html`<${AppsPage} />`;
  return html`<div class="shell">
    <a class="skip" href="#main" onClick=${skipToMain}>Skip to content</a>
    <header class="top">
      <a class="brand" href="#/apps">tenantd</a>
      <nav aria-label="Main">
        <a href="#/apps" aria-current=${!["usage", "api", "backups", "jobs"].includes(path[0]) ? "page" : undefined}>Apps</a>
        <a href="#/usage" aria-current=${path[0] === "usage" ? "page" : undefined}>Usage</a>
        <a href="#/backups" aria-current=${path[0] === "backups" ? "page" : undefined}>Backups</a>
        <a href="#/jobs" aria-current=${path[0] === "jobs" ? "page" : undefined}>Jobs</a>
        <a href="#/api" aria-current=${path[0] === "api" ? "page" : undefined}>API docs</a>
      </nav>
      <span class="who">${session.developer.email}</span>
      <button type="button" class="small" onClick=${out}>Sign out</button>
    </header>
    <${ErrorNote} error=${error} />
    <main id="main" tabindex="-1">${page}</main>
  </div>`;
}

/** A script error in a page shows as a message with a way out, not a blank or frozen screen. */
function Guard({ children }) {
  const [error, reset] = useErrorBoundary();
  if (error) {
    return html`<main class="narrow card" role="alert">
      <h1>Something broke on this page</h1>
      <p>${String(error.message ?? error)}</p>
      <button type="button" onClick=${() => (reset(), location.reload())}>Reload the dashboard</button>
    </main>`;
  }
  return children;
}

function Root() {
  const [session, setSession] = useState(null);
  const [error, setError] = useState(null);
  const [ended, setEnded] = useState(null);
  const load = (reason) => {
    setEnded(typeof reason === "string" ? reason : null);
    return getSession().then(setSession, setError);
  };
  useEffect(() => {
    setSignedOutHandler(load);
    load();
  }, []);
  if (error) return html`<main class="narrow"><${ErrorNote} error=${error} /></main>`;
  if (!session) return html`<${Loading} />`;
  if (!session.signedIn) return html`<${SignIn} session=${session} notice=${ended} onSignedIn=${(s) => (setEnded(null), setSession(s))} />`;
  return html`<${Shell} session=${session} onSignedOut=${load} />`;
}

render(html`<${Guard}><${Root} /><//>`, document.getElementById("root"));
