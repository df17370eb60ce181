import type { H3Event } from "h3";

type ReplyContext = { replyHeaders?: Record<string, string> };

/**
 * A header for whatever reply this request ends with (a JSON body, an error, a preflight):
 * kept as a plain pair on the request's context and written by the request middleware, so
 * a JSON reply needs no `Headers` object (json-reply.ts). Set, not appended: the last value
 * of a name wins, as with h3's merge of `event.res.headers`.
 */
export function setReplyHeader(event: H3Event, name: string, value: string): void {
  const ctx = event.context as ReplyContext;
  (ctx.replyHeaders ??= {})[name] = value;
}

export const replyHeadersOf = (event: H3Event): Record<string, string> | undefined => (event.context as ReplyContext).replyHeaders;
