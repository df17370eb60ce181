import * as v from "valibot";
import { toJsonSchema, type ConversionConfig } from "@valibot/to-json-schema";
import { ERROR_CODES, type ErrorCode } from "../errors.ts";
import { errorCodes, OPERATIONS, WEBHOOK_EVENTS, type Operation, type Success } from "./operations.ts";
import * as schemas from "./schemas.ts";

type Json = Record<string, unknown>;

// Named response schemas become components; the document refers to them by name.
const NAMES = new Map<unknown, string>(Object.entries(schemas).map(([name, schema]) => [schema, name]));

function convert(schema: v.GenericSchema, typeMode: "input" | "output"): Json {
  // Transforms (a query string read as a number) cannot be expressed: the input side is documented.
  const config: ConversionConfig = { target: "draft-2020-12", typeMode, errorMode: "ignore" };
  const { $schema: _, ...json } = toJsonSchema(schema, config) as Json;
  return json;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseSchema = (schema: v.GenericSchema) => (NAMES.has(schema) ? ref(NAMES.get(schema)!) : convert(schema, "output"));

/** `/a/:b` as OpenAPI writes it: `/a/{b}`. */
export const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

const SECURITY: Record<Operation["security"], Json[]> = {
  none: [],
  appKey: [{ appKey: [] }],
  tenant: [{ tenantBearer: [], appId: [] }],
  developer: [{ developerSession: [] }],
};

function success(kind: Success, status: number): Json {
  const description = status === 204 ? "No content" : status === 302 || status === 303 ? "Redirect (see the `location` header)" : "Success";
  if (kind === "empty" || kind === "redirect") return { description };
  if (kind === "html") return { description: "An HTML page", content: { "text/html": { schema: { type: "string" } } } };
  if (kind === "sse") return { description: "Server-sent events (docs/realtime.md)", content: { "text/event-stream": { schema: { type: "string" } } } };
  if (kind === "zip") return { description: "A ZIP archive", content: { "application/zip": { schema: { type: "string", contentMediaType: "application/zip" } } } };
  if (kind === "binary") return { description: "The file's bytes", content: { "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } };
  return { description, content: { "application/json": { schema: responseSchema(kind) } } };
}

/** One response per error status, its body's `error` narrowed to the codes of that status. */
function errorResponses(op: Operation): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodes(op)) byStatus.set(ERROR_CODES[code], [...(byStatus.get(ERROR_CODES[code]) ?? []), code]);
  const out: Json = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: codes.join(", "),
      content: {
        "application/json": {
          schema: { allOf: [ref("ErrorBody"), { type: "object", properties: { error: { enum: codes } } }] },
        },
      },
    };
  }
  return out;
}

function requestBody(op: Operation): Json | undefined {
  if (!op.body) return undefined;
  if (op.body === "form") return { required: true, content: { "application/x-www-form-urlencoded": { schema: { type: "object", additionalProperties: { type: "string" } } } } };
  if (op.body === "stripe") return { required: true, content: { "application/json": { schema: { type: "object", description: "Stripe's signed event, verified with the stripe-signature header." } } } };
  if (op.body === "multipart") {
    return {
      required: true,
      content: { "multipart/form-data": { schema: { type: "object", required: ["file"], properties: { file: { type: "string", contentMediaType: "application/octet-stream" } } } } },
    };
  }
  return { required: true, content: { "application/json": { schema: convert(op.body, "input") } } };
}

function parameters(op: Operation): Json[] {
  const params: Json[] = [...op.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
  if (op.query) {
    const json = convert(op.query, "input") as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(json.properties ?? {})) {
      params.push({ name, in: "query", required: json.required?.includes(name) ?? false, schema });
    }
  }
  for (const h of op.headers ?? []) params.push({ name: h.name, in: "header", required: false, description: h.description, schema: { type: "string" } });
  if (op.body === "stripe") params.push({ name: "stripe-signature", in: "header", required: true, schema: { type: "string" } });
  return params;
}

function operation(op: Operation): Json {
  const responses: Json = {};
  for (const [status, kind] of Object.entries(op.responses)) responses[status] = success(kind!, Number(status));
  const params = parameters(op);
  return {
    operationId: `${op.method.toLowerCase()}${toOpenApiPath(op.path).replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: SECURITY[op.security],
    ...(params.length ? { parameters: params } : {}),
    ...(requestBody(op) ? { requestBody: requestBody(op) } : {}),
    responses: { ...responses, ...errorResponses(op) },
  };
}

function webhooks(): Json {
  const out: Json = {};
  for (const [event, { summary, payload }] of Object.entries(WEBHOOK_EVENTS)) {
    const body = { allOf: [ref("WebhookEvent"), { type: "object", properties: { event: { const: event }, payload: convert(payload, "output") } }] };
    out[event] = {
      post: {
        summary,
        description: "Verify with `verifyWebhook` from `tenantd/webhooks` (HMAC-SHA256 of `{t}.{raw body}`, 300 s tolerance) before trusting the body.",
        parameters: [
          { name: "x-service-signature", in: "header", required: true, schema: { type: "string", pattern: "^t=\\d+,v1=[0-9a-f]{64}$" } },
          { name: "x-service-timestamp", in: "header", required: true, schema: { type: "string", pattern: "^\\d+$" } },
        ],
        requestBody: { required: true, content: { "application/json": { schema: body } } },
        responses: { "200": { description: "Any 2xx marks the delivery delivered; there is one attempt." } },
      },
    };
  }
  return out;
}

/** The OpenAPI 3.1 document of every route tenantd serves, generated from the route table and its schemas. */
export function buildOpenApiDocument(opts: { serverUrl?: string; version?: string } = {}): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const p = toOpenApiPath(op.path);
    paths[p] = { ...(paths[p] ?? {}), [op.method.toLowerCase()]: operation(op) };
  }
  const components: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(schemas)) components[name] = convert(schema as v.GenericSchema, "output");
  return {
    openapi: "3.1.0",
    info: {
      title: "tenantd",
      version: opts.version ?? "0.1.0",
      description: "Self-hostable backend for apps. Every non-2xx body is `{ error, message }` (docs/errors.md). Typed client: `tenantd/client`.",
      license: { name: "MIT", identifier: "MIT" },
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    tags: [...new Set(OPERATIONS.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    webhooks: webhooks(),
    components: {
      schemas: components,
      securitySchemes: {
        appKey: { type: "apiKey", in: "header", name: "x-service-key", description: "The app's publishable key (safe in browser code)." },
        tenantBearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A tenant access token (15 minutes), sent with appId." },
        appId: { type: "apiKey", in: "header", name: "x-service-app", description: "The app id, sent with the tenant bearer token." },
        developerSession: { type: "http", scheme: "bearer", description: "A developer session token (dev_…) from POST /api/v1/developer/login." },
      },
    },
  };
}
