import { html, render, useState, useEffect } from "./vendor/preact-htm.js";
import { getSession, setSignedOutHandler, signOut } from "./api.js";
import { ErrorNote, Loading } from "./ui.js";
import { SignIn } from "./pages/sign-in.js";
import { AppsPage } from "./pages/apps.js";
import { AppLayout } from "./pages/app-layout.js";
import { UsagePage } from "./pages/usage.js";

/** `#/apps/app_1/tenants` → ["apps", "app_1", "tenants"] */
const parseHash = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);

function useRoute() {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

function Shell({ session, onSignedOut }) {
  const route = useRoute();
  const [error, setError] = useState(null);
  const out = async () => {
    try {
      await signOut();
      onSignedOut();
    } catch (e) {
      setError(e);
    }
  };
  let page;
  if (route[0] === "apps" && route[1]) page = html`<${AppLayout} appId=${route[1]} route=${route.slice(2)} devMode=${session.devMode} />`;
  else if (route[0] === "usage") page = html`<${UsagePage} />`;
  else page = html`<${AppsPage} />`;
  return html`<div class="shell">
    <header class="top">
      <a class="brand" href="#/apps">tenantd</a>
      <nav aria-label="Main">
        <a href="#/apps" aria-current=${route[0] !== "usage" ? "page" : undefined}>Apps</a>
        <a href="#/usage" aria-current=${route[0] === "usage" ? "page" : undefined}>Usage</a>
      </nav>
      <span class="who">${session.developer.email}</span>
      <button type="button" class="small" onClick=${out}>Sign out</button>
    </header>
    <${ErrorNote} error=${error} />
    <main id="main">${page}</main>
  </div>`;
}

function Root() {
  const [session, setSession] = useState(null);
  const [error, setError] = useState(null);
  const load = () => getSession().then(setSession, setError);
  useEffect(() => {
    setSignedOutHandler(load);
    load();
  }, []);
  if (error) return html`<main class="narrow"><${ErrorNote} error=${error} /></main>`;
  if (!session) return html`<${Loading} />`;
  if (!session.signedIn) return html`<${SignIn} session=${session} onSignedIn=${setSession} />`;
  return html`<${Shell} session=${session} onSignedOut=${load} />`;
}

render(html`<${Root} />`, document.getElementById("root"));
