import { FastResponse } from "srvx";
import { HTTPError, type H3Event } from "h3";
import type { Logger } from "./log.ts";
import { isPgNulRejection, pgDataExceptionCode } from "./db/postgres/connection.ts";

/**
 * The one catalogue of error codes tenantd answers with. Every non-2xx response body is
 * `{ error: <code>, message: <text> }`; the status belongs to the code.
 */
export const ERROR_CODES = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_filter: 400,
  invalid_sort: 400,
  invalid_cursor: 400,
  invalid_token: 400,
  invalid_redirect: 400,
  invalid_state: 400,
  state_expired: 400,
  invalid_signature: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  invalid_access_token: 401,
  token_expired: 401,
  session_ended: 401,
  limit_reached: 402,
  forbidden: 403,
  access_denied: 403,
  origin_not_allowed: 403,
  signup_disabled: 403,
  invite_required: 403,
  email_not_verified: 403,
  reauthentication_required: 403,
  impersonation_read_only: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  already_verified: 409,
  email_exists: 409,
  seats_full: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  hook_failed: 500,
  provider_error: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Builds the error to throw for an expected failure; `onError` turns it into the JSON reply. */
export function fail(code: ErrorCode, message: string, headers?: Record<string, string>): HTTPError {
  return new HTTPError({ status: ERROR_CODES[code], message, body: { error: code }, headers });
}

// Statuses raised by h3/srvx themselves (routing, body limits) get the matching code.
const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  431: "headers_too_large",
};

export function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: code, message });
}

export function errorResponse(status: number, code: string, message: string, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json; charset=utf-8");
  // srvx's Response (what h3 builds for its own replies): on Node it is written with a
  // content-length, where a global Response would be streamed chunked.
  return new FastResponse(errorBody(code, message), { status, headers: h });
}

/** The `{ error, message }` reply for any error; unexpected ones are logged and hidden. */
export function errorToResponse(error: HTTPError, event: H3Event, log: Logger): Response {
  const headers = new Headers(event.res.headers);
  error.headers?.forEach((v, k) => headers.set(k, v));
  if (isPgNulRejection(error.cause ?? error)) return errorResponse(400, "invalid_request", "Text values must not contain the NUL character (\\u0000): remove it and send again.", headers);
  const dataException = pgDataExceptionCode(error.cause ?? error);
  if (dataException) {
    // Logged below warn: a client can send these at will. The code tells an operator which check is missing.
    log.info("request refused by the database", { method: event.req.method, path: event.url?.pathname, sqlstate: dataException });
    return errorResponse(400, "invalid_request", `The request holds a value the database cannot store (PostgreSQL data error ${dataException}): check texts for NUL characters or unpaired surrogates, and numbers for their range.`, headers);
  }
  const known = HTTPError.isError(error) && !error.unhandled;
  const code = known ? (error.body?.error as string | undefined) ?? CODE_FOR_STATUS[error.status] : undefined;
  if (!known || !code || code === "internal_error") {
    log.error("request failed", {
      method: event.req.method,
      path: event.url?.pathname,
      error: (error.cause as Error | undefined)?.stack ?? error.stack ?? String(error),
    });
    return errorResponse(500, "internal_error", "Something went wrong on the server. It has been logged.", headers);
  }
  // A server hook's failure is the operator's code: logged (with the request id) like any 500, but named.
  if (code === "hook_failed") {
    const hookError = (error as { hookError?: unknown }).hookError;
    log.error("server hook failed", { method: event.req.method, path: event.url?.pathname, error: (hookError as Error | undefined)?.stack ?? String(hookError) });
  }
  // h3 rejects a malformed percent-encoded path before routing, with only "Bad Request".
  const message = error.status === 400 && error.message === "Bad Request" ? "The request path is malformed (bad percent-encoding): encode special characters as %XX." : error.message || code;
  return errorResponse(error.status, code, message, headers);
}

/** Any thrown value as an HTTPError; what was not one is marked unhandled (a 500, logged). */
export function asHttpError(thrown: unknown): HTTPError {
  if (HTTPError.isError(thrown)) return thrown;
  const error = new HTTPError(thrown as Error);
  (error as { unhandled?: boolean }).unhandled = true;
  if ((thrown as Error | undefined)?.stack) error.stack = (thrown as Error).stack;
  return error;
}
