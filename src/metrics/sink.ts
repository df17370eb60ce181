/**
 * What the areas report to the metrics, when they are on (`core.metrics`). A type only, so
 * a server without metrics loads no part of them (prom-client included): the areas call
 * `core.metrics?.…`, which costs nothing when it is undefined.
 */
export interface MetricsSink {
  /** A webhook delivery ended: `delivered`, `failed` or `invalid_config`. */
  webhookDelivery(outcome: string): void;
  /** A queued email was handed to the transport (`sent`) or could not be (`failed`). */
  email(outcome: "sent" | "failed"): void;
}
