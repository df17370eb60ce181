// The load generator: autocannon's programmatic API in the parent process, apart from both servers.
import autocannon from "autocannon";

/**
 * Runs one autocannon load. `requests` is autocannon's request list (with `setupRequest` /
 * `onResponse` where a request depends on the last answer). Returns the figures we report.
 */
export async function load({ url, requests, connections, duration, amount }) {
  const result = await autocannon({
    url,
    connections,
    ...(amount ? { amount } : { duration }),
    requests,
    timeout: 30,
  });
  const seconds = result.duration || duration;
  return {
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    connections,
    seconds: Math.round(seconds * 10) / 10,
  };
}

/** Same as `load`, but over several loads started together (login storm plus a cheap probe). */
export function loadTogether(...loads) {
  return Promise.all(loads.map((l) => load(l)));
}
