import { HTTPError } from "h3";
import type { Core } from "../core.ts";

export const DEFAULT_HOOK_TIMEOUT_MS = 5000;

/** The 500 a failing or slow hook answers, naming it; the cause is logged, not shown. */
export function hookFailed(name: string, cause: unknown): HTTPError {
  const why = cause instanceof HookTimeout ? `did not finish within ${cause.ms} ms` : "threw an error";
  // The hook's own error rides along for the log line (errors.ts), never into the reply.
  return Object.assign(new HTTPError({ status: 500, message: `The server hook ${name} ${why}; the server's log has the details.`, body: { error: "hook_failed" } }), { hookError: cause });
}

class HookTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** `fn()` bounded by `ms`: past it the caller goes on with a HookTimeout (the hook itself cannot be stopped). */
export async function withTimeout<T>(ms: number, fn: () => T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(fn),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new HookTimeout(ms)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs the operator's hook `name`: a refusal it throws (`refuse()`, any tenantd error) goes
 * to the client as it is; anything else, or running past the timeout, is `hook_failed`.
 */
export async function runHook<T>(core: Core, name: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await withTimeout(core.serverHooks?.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, fn);
  } catch (e) {
    if (HTTPError.isError(e) && !e.unhandled && e.status < 500) throw e;
    throw hookFailed(name, e);
  }
}
