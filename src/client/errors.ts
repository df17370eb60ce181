/**
 * The one error the client throws. API refusals carry the server's `{ error, message }`
 * as `code` and `message` with the HTTP `status`; a request that never got an answer
 * (offline, DNS, CORS, aborted) has `status` 0 and `code` "network_error".
 */
export class TenantdError extends Error {
  override readonly name = "TenantdError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** True when no answer came back: retrying later may help, the request was not refused. */
  get isNetworkError(): boolean {
    return this.status === 0;
  }
}
