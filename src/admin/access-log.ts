import type { Core } from "../core.ts";
import { toIso } from "../clock.ts";

/** Requests kept per app, newest last: enough for "what just happened", bounded in memory. */
export const ACCESS_LOG_SIZE = 500;

export interface AccessEntry {
  at: number;
  method: string;
  route: string;
  status: number;
  ms: number;
  requestId: string;
}

/** Apps tracked per node: app ids come from requests, so unknown ones must not grow memory. */
const MAX_APPS = 1000;

interface Ring {
  entries: AccessEntry[];
  /** where the next entry goes once the ring is full */
  next: number;
}

const logs = new WeakMap<Core, Map<string, Ring>>();

/**
 * Remembers one answered request of an app for the dashboard's Logs page. In memory on
 * this node only (the full access log is the server's log output): a restart empties it.
 */
export function rememberAccess(core: Core, appId: string, entry: AccessEntry): void {
  let byApp = logs.get(core);
  if (!byApp) logs.set(core, (byApp = new Map()));
  let ring = byApp.get(appId);
  if (!ring) {
    if (byApp.size >= MAX_APPS) byApp.delete(byApp.keys().next().value!);
    byApp.set(appId, (ring = { entries: [], next: 0 }));
  }
  if (ring.entries.length < ACCESS_LOG_SIZE) ring.entries.push(entry);
  else {
    ring.entries[ring.next] = entry;
    ring.next = (ring.next + 1) % ACCESS_LOG_SIZE;
  }
}

/** An app's remembered requests, newest first, optionally of one status class ("4" for 4xx). */
export function recentAccess(core: Core, appId: string, opts: { statusClass?: string; limit: number }) {
  const ring = logs.get(core)?.get(appId);
  const entries = ring ? [...ring.entries.slice(ring.next), ...ring.entries.slice(0, ring.next)] : [];
  const out = [];
  for (let i = entries.length - 1; i >= 0 && out.length < opts.limit; i--) {
    const e = entries[i]!;
    if (opts.statusClass && String(e.status)[0] !== opts.statusClass) continue;
    out.push({ at: toIso(e.at)!, method: e.method, route: e.route, status: e.status, ms: e.ms, requestId: e.requestId });
  }
  return { entries: out, kept: ACCESS_LOG_SIZE };
}
