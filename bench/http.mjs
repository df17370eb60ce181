// The setup calls the parent makes before a load (sign up, make records, upload a file).

import { randomBytes } from "node:crypto";

/** One JSON request; answers `{ status, body }` with the body parsed when it is JSON. */
export async function call(base, method, path, { key, bearer, body, raw, headers = {} } = {}) {
  const h = { ...headers };
  if (key) h["x-service-key"] = key;
  if (bearer) Object.assign(h, bearerHeaders(bearer));
  if (body !== undefined) h["content-type"] = "application/json";
  const res = await fetch(base + path, { method, headers: h, body: body !== undefined ? JSON.stringify(body) : raw });
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

export const bearerHeaders = ({ accessToken, appId }) => ({ authorization: `Bearer ${accessToken}`, "x-service-app": appId });

/** tenantd answers a path it has no route for with 404 "No route for …" (or 405 for another method). */
export function missingRoute(res) {
  return res.status === 405 || (res.status === 404 && /^No route for/.test(res.body?.message ?? ""));
}

/** Thrown by a scenario's setup to skip it, with the reason printed in the table. */
export class Skip extends Error {}

/** Skips when tenantd has no such endpoint; fails loudly on any other unexpected answer. */
export function expectOk(res, what, okStatuses = [200, 201]) {
  if (missingRoute(res)) throw new Skip("skipped: endpoint not present");
  if (!okStatuses.includes(res.status)) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body;
}

const BOUNDARY = "----tenantdbench7MA4YWxkTrZu0gW";

/** Random bytes stored as octet-stream: a leading control byte, since random bytes start with `<` and a letter about once in 1,300 files, which tenantd refuses as markup. */
export function opaqueBytes(n) {
  const data = randomBytes(n);
  data[0] = 0x01;
  return data;
}

/** A multipart/form-data body with one part named `file` holding `bytes`. */
export function multipart(bytes, filename = "bench.bin", type = "application/octet-stream") {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  return { body: Buffer.concat([head, bytes, tail]), contentType: `multipart/form-data; boundary=${BOUNDARY}` };
}
