import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Core } from "../core.ts";
import type { Lifecycle } from "../http/lifecycle.ts";
import { queuedMail } from "../email/mailer.ts";
import type { MetricsSink } from "./sink.ts";

/** Methods a route can have; anything else is counted as OTHER, so a client cannot add labels. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * The process's own metrics (CPU, memory, event-loop lag, GC): one set per process, however
 * many backends it runs, collected from the first backend with metrics on.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface Metrics {
  sink: MetricsSink;
  /** One answered request: its method, route pattern (never the raw path), status and seconds. */
  request(method: string, route: string, status: number, seconds: number): void;
  dbOperation(operation: string, seconds: number): void;
  /** Repository calls started and not yet answered. */
  dbInFlight: { n: number };
  /** The exposition text and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

export function createMetrics(core: Core, lifecycle: Lifecycle): Metrics {
  const registry = new Registry();
  const dbInFlight = { n: 0 };
  const requests = new Histogram({
    name: "tenantd_http_request_duration_seconds",
    help: "Time from a request's arrival to its response headers, by method, route pattern and status; _count is the number of requests.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  new Gauge({
    name: "tenantd_http_requests_in_flight",
    help: "Requests being handled now.",
    registers: [registry],
    collect() {
      this.set(lifecycle.inFlight);
    },
  });
  const dbOperations = new Histogram({
    name: "tenantd_db_operation_duration_seconds",
    help: "Time of each database operation (one repository call: a statement or a transaction), by operation.",
    labelNames: ["operation"] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: "tenantd_db_operations_in_flight",
    help: "Database operations started and not yet answered (on PostgreSQL, compare with tenantd_db_pool_max).",
    registers: [registry],
    collect() {
      this.set(dbInFlight.n);
    },
  });
  new Gauge({
    name: "tenantd_db_pool_max",
    help: "PostgreSQL connections this process may open (database.pool.max); 1 on SQLite, whose one connection is synchronous.",
    labelNames: ["engine"] as const,
    registers: [registry],
    collect() {
      this.set({ engine: core.engine }, core.config.database?.pool.max ?? 1);
    },
  });
  new Gauge({
    name: "tenantd_webhook_queue_depth",
    help: "Webhook events waiting to be sent, over every app.",
    registers: [registry],
    async collect() {
      this.set(await core.db.webhooks.queueDepth());
    },
  });
  const webhooks = new Counter({
    name: "tenantd_webhook_deliveries_total",
    help: "Webhook deliveries by outcome: delivered, failed (the receiver refused or did not answer in time), invalid_config (no URL).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  new Gauge({
    name: "tenantd_email_queue_depth",
    help: "Emails queued in this process and not yet handed to the transport.",
    registers: [registry],
    collect() {
      this.set(queuedMail(core));
    },
  });
  const emails = new Counter({
    name: "tenantd_emails_total",
    help: "Queued emails by outcome: sent (handed to the transport or the outbox), failed.",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const own = processMetrics();

  return {
    sink: {
      webhookDelivery: (outcome) => webhooks.inc({ outcome }),
      email: (outcome) => emails.inc({ outcome }),
    },
    request(method, route, status, seconds) {
      requests.observe({ method: METHODS.has(method) ? method : "OTHER", route, status: String(status) }, seconds);
    },
    dbOperation: (operation, seconds) => dbOperations.observe({ operation }, seconds),
    dbInFlight,
    async render() {
      const merged = Registry.merge([own, registry]);
      return { contentType: merged.contentType, body: await merged.metrics() };
    },
  };
}
