import type { Server } from "node:http";
import type { Socket } from "node:net";
import { errorBody } from "../errors.ts";

/**
 * Node answers malformed requests and oversized headers itself, before any handler, with a
 * bare text reply. This makes those replies the `{ error, message }` JSON every other error has.
 */
export function attachJsonClientErrors(server: Server): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || (err.code === "ECONNRESET")) {
      socket.destroy();
      return;
    }
    const [status, code, message] =
      err.code === "HPE_HEADER_OVERFLOW"
        ? [431, "headers_too_large", "The request headers are too large."]
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "invalid_request", "The request took too long to arrive."]
          : [400, "invalid_request", "The request is not valid HTTP."];
    const body = errorBody(code, message);
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? "Request Header Fields Too Large" : status === 408 ? "Request Timeout" : "Bad Request"}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
