// Every dashboard API call goes through this openapi-fetch client, typed by the types
// openapi-typescript generates from openapi.yaml (clients/typescript/src/schema.d.ts, committed
// and kept fresh by `make ts-check`). A path, parameter or body the spec does not have is a
// type error here, so `scripts/web.sh check` (tsc --noEmit) catches a contract change.
//
// The types are the `schema` response shape (the default, `--response-shape schema`); the
// dashboard is not meant for a `guide`-shaped deployment.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "../../../clients/typescript/src/schema";
import { getAccessToken, notifyUnauthorized } from "./token";

export type Schemas = components["schemas"];
export type { paths };

const auth: Middleware = {
  onRequest({ request }) {
    const token = getAccessToken();
    if (token) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) notifyUnauthorized();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: "same-origin" });
api.use(auth);

// ApiError carries the documented error body's code and message (components.schemas.Error).
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly retryAfter?: number, // seconds, from a 429's Retry-After
  ) {
    super(message);
  }
}

function isErrorBody(v: unknown): v is Schemas["Error"] {
  if (typeof v !== "object" || v === null || !("error" in v)) return false;
  const e = (v as { error: unknown }).error;
  return typeof e === "object" && e !== null && "message" in e && "code" in e;
}

export function toApiError(status: number, body: unknown, headers?: Headers): ApiError {
  const ra = Number(headers?.get("Retry-After") ?? NaN);
  const retryAfter = Number.isFinite(ra) && ra >= 0 ? ra : undefined;
  if (isErrorBody(body)) {
    return new ApiError(status, body.error.code, body.error.message, body.error.param, retryAfter);
  }
  return new ApiError(status, "http_" + String(status), `The server answered ${status}.`);
}

// unwrap turns openapi-fetch's {data, error, response} into the data or a thrown ApiError.
export async function unwrap<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok || error !== undefined) throw toApiError(response.status, error, response.headers);
  return data as T;
}

// A new Idempotency-Key: one per intended action, so a repeated click or a retry replays the
// first answer instead of acting twice.
export function idempotencyKey(): string {
  return crypto.randomUUID();
}
