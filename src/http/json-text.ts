import { HTTPResponse } from "h3";

/** The content type h3 gives a JSON reply; tenantd's own JSON replies say the same. */
export const JSON_CONTENT_TYPE = "application/json;charset=UTF-8";
const JSON_TYPE = { "content-type": JSON_CONTENT_TYPE };

/** A reply whose JSON text is already built; h3 renders it as any HTTPResponse, the request middleware without copying headers (json-reply.ts). */
export class JsonText extends HTTPResponse {
  declare body: string;
}

/** A JSON reply whose text is already built (see src/data/records.ts recordJson); status from event.res. */
export function jsonText(text: string): HTTPResponse {
  return new JsonText(text, { headers: JSON_TYPE });
}
