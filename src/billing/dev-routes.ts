import { getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { readLimited } from "../http/body.ts";
import { fail } from "../errors.ts";
import { DEV_PAGE_PATH, completeCheckout, portalAction, renderCheckoutPage, renderPortalPage } from "./dev-provider.ts";

// The page only posts back to itself; nothing else may load or frame it.
const HTML_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

const html = (body: string) => new Response(body, { headers: HTML_HEADERS });
const redirect = (location: string) => new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });

/** The `action` field of the page's form post. */
async function formAction(event: H3Event, core: Core): Promise<string> {
  const type = event.req.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw fail("unsupported_media_type", "Post the page's form (application/x-www-form-urlencoded).");
  }
  return new URLSearchParams(await readLimited(event, core.config.maxJsonBytes)).get("action") ?? "";
}

/** The development provider's checkout and portal pages (only reachable through their tokens). */
export function registerBillingDevRoutes(router: Router, core: Core): void {
  if (!core.config.devBilling) return;
  const token = (event: H3Event) => getRouterParam(event, "token") ?? "";

  router.get(`${DEV_PAGE_PATH}/checkout/:token`, async (event) => html(await renderCheckoutPage(core, token(event))));
  router.post(`${DEV_PAGE_PATH}/checkout/:token`, async (event) => {
    const action = await formAction(event, core);
    return redirect(await completeCheckout(core, token(event), action));
  });
  router.get(`${DEV_PAGE_PATH}/portal/:token`, async (event) => html(await renderPortalPage(core, token(event))));
  router.post(`${DEV_PAGE_PATH}/portal/:token`, async (event) => {
    const action = await formAction(event, core);
    await portalAction(core, token(event), action);
    return redirect(event.url.pathname);
  });
}
