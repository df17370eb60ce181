import { createRequire } from "node:module";
import type { Core } from "../core.ts";
import { fail } from "../errors.ts";
import type { Router } from "./router.ts";
import type { Lifecycle } from "./lifecycle.ts";

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

/**
 * Probes for load balancers, Docker HEALTHCHECK and Kubernetes: no auth, no secrets, cheap.
 * Liveness asks the database a trivial query; readiness says whether new work is welcome.
 */
export function registerHealthRoutes(router: Router, core: Core, lifecycle: Lifecycle): void {
  router.get("/api/v1/health", async () => {
    try {
      await core.db.meta.ping();
    } catch (e) {
      core.log.error("health: the database does not answer", { error: e as Error });
      throw fail("unavailable", "The database does not answer.");
    }
    return { status: "ok", version };
  });
  router.get("/api/v1/health/ready", () => {
    if (lifecycle.state !== "serving") throw fail("unavailable", `Not ready: the server is ${lifecycle.state}.`);
    return { status: "ready", version };
  });
}
