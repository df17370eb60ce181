import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

/** One request the real `stripe` client sent, with its form body decoded into objects. */
export interface RecordedRequest {
  method: string;
  path: string;
  body: Record<string, any>;
  authorization: string | undefined;
}

type Obj = Record<string, any>;

/** `a[b][0][c]=v` form bodies (what stripe-node sends) as nested objects and arrays. */
export function decodeForm(text: string): Obj {
  const root: Obj = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.split(/\[|\]\[|\]/).filter((p) => p !== "");
    let node: any = root;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = value;
      else node = node[part] ??= /^\d+$/.test(parts[i + 1]!) ? [] : {};
    });
  }
  return root;
}

/**
 * A small Stripe: the REST subset tenantd uses, in memory, on a local port. Tests point the
 * real `stripe` client at it (`stripeApi` config) and read `requests` to see what was sent.
 */
export async function startFakeStripe(opts: { secretKey: string; now: () => number }) {
  const requests: RecordedRequest[] = [];
  const store = { customers: new Map<string, Obj>(), products: new Map<string, Obj>(), prices: new Map<string, Obj>(), sessions: new Map<string, Obj>(), subscriptions: new Map<string, Obj>() };
  let seq = 0;
  const id = (prefix: string) => `${prefix}_fake${++seq}`;
  const seconds = () => Math.floor(opts.now() / 1000);
  /** Answers with 503 to the next N requests (to test outages). */
  let failNext = 0;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "request-id": id("req") });
    res.end(JSON.stringify(body));
  };
  const missing = (res: ServerResponse, what: string) =>
    send(res, 404, { error: { type: "invalid_request_error", code: "resource_missing", message: `No such ${what}` } });

  function subscriptionObject(input: { customer: string; price: string; metadata?: Obj; status?: string; periodEnd?: number; quantity?: number }): Obj {
    const created = seconds();
    const price = store.prices.get(input.price) ?? { id: input.price, object: "price" };
    return {
      id: id("sub"),
      object: "subscription",
      customer: input.customer,
      status: input.status ?? "active",
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: null,
      created,
      metadata: input.metadata ?? {},
      items: { object: "list", data: [{ id: id("si"), object: "subscription_item", price, quantity: input.quantity ?? 1, current_period_start: created, current_period_end: input.periodEnd ?? created + 30 * 86400 }] },
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? "/", "http://fake");
    const body = decodeForm(req.method === "GET" ? url.search.slice(1) : Buffer.concat(chunks).toString("utf8"));
    const method = req.method ?? "GET";
    requests.push({ method, path: url.pathname, body, authorization: req.headers.authorization });
    if (failNext > 0) {
      failNext--;
      return send(res, 503, { error: { type: "api_error", message: "fake outage" } });
    }
    if (req.headers.authorization !== `Bearer ${opts.secretKey}`) {
      return send(res, 401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
    }
    const route = `${method} ${url.pathname.replace(/\/(cus|prod|price|cs|sub)_[A-Za-z0-9]+$/, "/:id")}`;
    const pathId = url.pathname.split("/").pop()!;
    switch (route) {
      case "POST /v1/customers": {
        const c = { id: id("cus"), object: "customer", email: body.email ?? null, metadata: body.metadata ?? {} };
        store.customers.set(c.id, c);
        return send(res, 200, c);
      }
      case "POST /v1/products": {
        const p = { id: id("prod"), object: "product", name: body.name, description: body.description ?? null, metadata: body.metadata ?? {}, active: true };
        store.products.set(p.id, p);
        return send(res, 200, p);
      }
      case "POST /v1/prices": {
        if (!store.products.has(body.product)) return missing(res, `product: '${body.product}'`);
        const p = { id: id("price"), object: "price", product: body.product, unit_amount: Number(body.unit_amount), currency: body.currency, recurring: { interval: body.recurring?.interval }, active: true, metadata: body.metadata ?? {} };
        store.prices.set(p.id, p);
        return send(res, 200, p);
      }
      case "GET /v1/prices/:id":
        return store.prices.has(pathId) ? send(res, 200, store.prices.get(pathId)) : missing(res, `price: '${pathId}'`);
      case "POST /v1/checkout/sessions": {
        const s = { id: id("cs"), object: "checkout.session", status: "open", url: `https://checkout.stripe.test/c/pay/${seq}`, subscription: null, ...body };
        store.sessions.set(s.id, s);
        return send(res, 200, s);
      }
      case "POST /v1/billing_portal/sessions": {
        if (!store.customers.has(body.customer)) return missing(res, `customer: '${body.customer}'`);
        return send(res, 200, { id: id("bps"), object: "billing_portal.session", customer: body.customer, return_url: body.return_url, url: `https://billing.stripe.test/p/session/${seq}` });
      }
      case "GET /v1/subscriptions/:id":
        return store.subscriptions.has(pathId) ? send(res, 200, store.subscriptions.get(pathId)) : missing(res, `subscription: '${pathId}'`);
      case "POST /v1/subscriptions/:id": {
        const s = store.subscriptions.get(pathId);
        if (!s) return missing(res, `subscription: '${pathId}'`);
        for (const change of (body.items ?? []) as Obj[]) {
          const item = s.items.data.find((i: Obj) => i.id === change.id);
          if (!item) return missing(res, `subscription item: '${change.id}'`);
          if (change.quantity !== undefined) item.quantity = Number(change.quantity);
        }
        return send(res, 200, s);
      }
      case "DELETE /v1/subscriptions/:id": {
        const s = store.subscriptions.get(pathId);
        if (!s) return missing(res, `subscription: '${pathId}'`);
        Object.assign(s, { status: "canceled", canceled_at: seconds(), ended_at: seconds() });
        return send(res, 200, s);
      }
      default:
        return send(res, 404, { error: { type: "invalid_request_error", message: `fake stripe: unrecognized request URL (${method}: ${url.pathname})` } });
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => send(res, 500, { error: { type: "api_error", message: String(e) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    requests,
    store,
    /** The tenantd config option that sends the stripe client here. */
    api: { host: "127.0.0.1", port, protocol: "http" as const },
    failNextRequests(n: number) {
      failNext = n;
    },
    /** What Stripe does when the customer pays: the session completes and a subscription exists. */
    completeCheckout(sessionId: string, overrides: { status?: string } = {}): { session: Obj; subscription: Obj } {
      const session = store.sessions.get(sessionId);
      if (!session) throw new Error(`fake stripe: no session ${sessionId}`);
      const subscription = subscriptionObject({
        customer: session.customer, price: session.line_items[0].price, quantity: Number(session.line_items[0].quantity ?? 1), metadata: session.subscription_data?.metadata, ...overrides,
      });
      store.subscriptions.set(subscription.id, subscription);
      Object.assign(session, { status: "complete", subscription: subscription.id });
      return { session, subscription };
    },
    /** A subscription made outside checkout (e.g. in the Stripe dashboard). */
    createSubscription(input: { customer: string; price: string; metadata?: Obj; status?: string }): Obj {
      const s = subscriptionObject(input);
      store.subscriptions.set(s.id, s);
      return s;
    },
    updateSubscription(subId: string, patch: Obj): Obj {
      const s = store.subscriptions.get(subId);
      if (!s) throw new Error(`fake stripe: no subscription ${subId}`);
      return Object.assign(s, patch);
    },
    /** A Stripe event as Stripe posts it, with the `stripe-signature` header. */
    signedEvent(secret: string, type: string, object: Obj, eventId = id("evt")): { payload: string; signature: string } {
      const payload = JSON.stringify({ id: eventId, object: "event", type, created: seconds(), api_version: Stripe.API_VERSION, livemode: false, data: { object: structuredClone(object) } });
      return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: seconds() }) };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type FakeStripe = Awaited<ReturnType<typeof startFakeStripe>>;
