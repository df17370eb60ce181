import { AsyncLocalStorage } from "node:async_hooks";
import { settle } from "./awaitable.ts";

type Fields = Record<string, unknown>;

/**
 * What tenantd logs through. Any object with these methods works (pino, winston, console
 * wrappers); `debug` is optional. tenantd redacts secrets before a custom logger sees a line.
 */
export interface Logger {
  debug?(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
}

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = "pretty" | "json";

// Field names whose values never reach a log line, whatever area logs them.
const SECRET_FIELD = /pass(word)?|secret|token|key|authorization|cookie|hash|credential/i;
// Secrets inside text: query or fragment parameters of links (verify/reset links carry tokens)
// and bearer values.
const SECRET_IN_TEXT = /([?&#](?:[\w-]*token|token|code|key|secret|signature|sig)=)[^&#\s"']+|(Bearer\s+)[\w.~+/=-]+/gi;

export function redactText(s: string): string {
  return s.replace(SECRET_IN_TEXT, (_m, param: string | undefined, bearer: string | undefined) => `${param ?? bearer}[redacted]`);
}

/**
 * A value shown in logs as is, past redaction: only the development outbox uses it, for
 * the link a person follows instead of reading mail. Never use it outside development.
 */
export class ShownInLogs {
  constructor(readonly value: string) {}
}

function redactValue(key: string, value: unknown, depth: number): unknown {
  if (value instanceof ShownInLogs) return value.value;
  if (SECRET_FIELD.test(key)) return "[redacted]";
  if (value instanceof Error) return redactText(value.message);
  if (typeof value === "string") return redactText(value);
  if (depth < 3 && value && typeof value === "object" && !Array.isArray(value)) return redactFields(value as Fields, depth + 1);
  return value;
}

export function redactFields(fields: Fields | undefined, depth = 0): Fields | undefined {
  if (!fields) return undefined;
  const safe: Fields = {};
  for (const [k, v] of Object.entries(fields)) safe[k] = redactValue(k, v, depth);
  return safe;
}

/**
 * The request being served (set by the request-id middleware), so every line of it carries
 * the id: across awaits through AsyncLocalStorage, or for the synchronous run of a quiet
 * route (one that writes no line of its own) in a plain variable.
 *
 * Why two ways: on Node 20 an enabled AsyncLocalStorage runs async hooks on every promise,
 * tick and timer of the whole process, 10–13 % of the instructions of the cheapest requests
 * (docs/performance.md, tenth round). So it is enabled only while a request that needs it is
 * in flight, and disabled again when none is.
 */
const requestContext = new AsyncLocalStorage<string>();
let carried = 0;
let syncRequestId: string | undefined;

function release(): void {
  if (--carried === 0) requestContext.disable();
}

/** `fn()`, its lines (and those of everything it awaits) carrying `requestId`. */
export function carryRequestId<R>(requestId: string, fn: () => R): R {
  carried++;
  let out: R;
  try {
    out = requestContext.run(requestId, fn);
  } catch (error) {
    release();
    throw error;
  }
  return settle(
    out,
    (value) => {
      release();
      return value;
    },
    (error: unknown) => {
      release();
      throw error;
    },
  ) as R;
}

/** `fn()`, the lines it writes synchronously carrying `requestId`; no async hooks. */
export function withRequestId<R>(requestId: string, fn: () => R): R {
  const outer = syncRequestId;
  syncRequestId = requestId;
  try {
    return fn();
  } finally {
    syncRequestId = outer;
  }
}

/** The id of the request being served, if any: for work it starts that runs after it answers. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore() ?? syncRequestId;
}

function withRequest(fields: Fields | undefined): Fields | undefined {
  const requestId = currentRequestId();
  if (requestId === undefined || (fields && "requestId" in fields)) return fields;
  return { ...fields, requestId };
}

/**
 * Wraps any logger so that what reaches it is already safe: secret-looking fields and
 * tokens inside links are redacted, and the current request id is added.
 */
export function safeLogger(inner: Logger): Logger {
  const line = (fn: ((m: string, f?: Fields) => void) | undefined) => (m: string, f?: Fields) => {
    if (!fn) return;
    const fields = redactFields(withRequest(f));
    fn.call(inner, redactText(m), fields);
  };
  return { debug: line(inner.debug), info: line(inner.info), warn: line(inner.warn), error: line(inner.error) };
}

/** The built-in logger's method for a level below its threshold: a caller may skip building the line. */
export const LOG_OFF = (): undefined => undefined;

/** The built-in logger: stderr, one line per entry, `pretty` for people or `json` for collectors. */
export function createConsoleLogger(level: LogLevel = "info", format: LogFormat = "pretty", write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const emit = (lvl: Exclude<LogLevel, "silent">) => (message: string, fields?: Fields) => {
    if (format === "json") {
      write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg: message, ...fields }) + "\n");
    } else {
      write(`[tenantd] ${lvl} ${message}${fields && Object.keys(fields).length ? " " + JSON.stringify(fields) : ""}\n`);
    }
  };
  const safe = safeLogger({ debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") });
  // A level below the threshold does nothing before redacting: the access log calls `info`
  // on every request, also when only errors are written.
  const on = (lvl: Exclude<LogLevel, "silent">) => LOG_LEVELS.indexOf(lvl) >= rank;
  return { debug: on("debug") ? safe.debug : LOG_OFF, info: on("info") ? safe.info : LOG_OFF, warn: on("warn") ? safe.warn : LOG_OFF, error: on("error") ? safe.error : LOG_OFF };
}
