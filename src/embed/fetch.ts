import type { H3 } from "h3";
import type { ServerRequest } from "srvx";
import type { Core } from "../core.ts";

/**
 * What a fetch host knows about the connection, given as `backend.fetch(request, client)`.
 * Each field is what one host hands its fetch handler, so the handler can be passed as is:
 * `Deno.serve(backend.fetch)`, `Bun.serve({ fetch: backend.fetch })`, Hono's
 * `app.mount("/", backend.fetch)` on @hono/node-server; or say it yourself with `{ ip }`.
 */
export interface FetchClient {
  /** The client's address (IPv4 or IPv6), when the host knows it. */
  ip?: string;
  /** Deno.serve's second argument. */
  remoteAddr?: { hostname?: string };
  /** @hono/node-server's `c.env`: the Node request. */
  incoming?: { socket?: { remoteAddress?: string } };
  /** Bun.serve's server. */
  requestIP?(request: Request): { address: string } | null;
}

/** The client's address from the host: said outright, on the request (srvx, h3), or in the host's second argument. */
export function clientAddressOf(request: ServerRequest, client: FetchClient | undefined): string | undefined {
  return client?.ip || request.ip || client?.remoteAddr?.hostname || client?.incoming?.socket?.remoteAddress || safeRequestIP(request, client) || undefined;
}

// Bun answers null for a request it did not receive (one a framework rebuilt): no address.
function safeRequestIP(request: Request, client: FetchClient | undefined): string | undefined {
  if (typeof client?.requestIP !== "function") return undefined;
  try {
    return client.requestIP(request)?.address;
  } catch {
    return undefined;
  }
}

/**
 * `backend.fetch`: h3's, plus the client's address. Without one, per-client rate limits
 * (sign-in, sign-up, uploads) count every client together, and past the limit anyone's
 * sign-in is refused: the first such request says so, once.
 */
export function fetchWithClient(h3: H3, core: Core): (request: ServerRequest, client?: FetchClient) => Response | Promise<Response> {
  let warned = false;
  const plain = h3.fetch;
  return (request, client) => {
    // Served by srvx (tenantd serve, toNodeHandler), h3 reads the address off the request itself.
    if (request.ip && !client?.ip) return plain(request);
    const ip = clientAddressOf(request, client);
    // With rate limits off (rateLimit: false) there is no per-client count to spoil.
    if (ip === undefined && !warned && core.config.rateLimit && !(core.config.trustProxy && request.headers.has("x-forwarded-for"))) {
      warned = true;
      core.log.warn(
        "backend.fetch got a request without the client's address, so per-client rate limits count every client together (past the limit, a sign-in from anyone is refused). " +
          "Pass it: backend.fetch(request, { ip }), or hand backend.fetch to the host as is (Deno.serve, Bun.serve, Hono's app.mount). See docs/embedding.md.",
      );
    }
    return h3.request(request, undefined, ip === undefined ? undefined : { clientAddress: ip });
  };
}
