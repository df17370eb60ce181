import { HTTPResponse } from "h3";

const JSON_TYPE = { "content-type": "application/json;charset=UTF-8" };

/** A JSON reply whose text is already built (see src/data/records.ts recordJson); status from event.res. */
export function jsonText(text: string): HTTPResponse {
  return new HTTPResponse(text, { headers: JSON_TYPE });
}
