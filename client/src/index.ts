/**
 * A typed client of the loyalty & assistant platform.
 *
 * Why: the platform describes every route in its OpenAPI document (`GET /openapi.json`);
 * `schema.ts` is that document as TypeScript types, and openapi-fetch (a thin `fetch` wrapper,
 * no code per route) checks each call against them: the path, its path and query parameters,
 * the JSON body, and the answer: `data` is the success schema, `error` the error schema of the
 * route (`ErrorDetail` `{detail}`, or `ErrorSuccess` `{success: false, error}` for gifts and text).
 *
 *   const client = createPlatformClient({ baseUrl: 'http://127.0.0.1:8000', apiKey });
 *   const { data, error, response } = await client.GET('/loyalty/points/{internal_user_id}', { params: { path: { internal_user_id } } });
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';

import type { components, operations, paths } from './schema.ts';

export type { components, operations, paths } from './schema.ts';

/** Every named schema of the document: `Schemas['Gift']`, `Schemas['ErrorDetail']`, … */
export type Schemas = components['schemas'];
/** The error answer of most routes. */
export type ErrorDetail = Schemas['ErrorDetail'];
/** The error answer of gifts and text processing. */
export type ErrorSuccess = Schemas['ErrorSuccess'];
/** Any error answer the platform sends. */
export type PlatformError = ErrorDetail | ErrorSuccess;
/** Every documented path. */
export type PlatformPath = keyof paths;
/** The JSON body an operation accepts: `RequestBody<'postGiftsGifts'>`. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
/** The JSON answer of an operation for a status (200 unless told): `ResponseBody<'getGiftsGifts'>`. */
export type ResponseBody<Op extends keyof operations, Status extends number = 200> =
  operations[Op]['responses'] extends Record<Status, { content: { 'application/json': infer R } }> ? R : never;

/** The client: `client.GET(path, init)`, `POST`, `PUT`, `PATCH`, `DELETE`, and `use(middleware)`. */
export type PlatformClient = Client<paths>;

export interface PlatformClientOptions {
  /** Where the platform answers, e.g. `http://127.0.0.1:8000` (no trailing path). */
  baseUrl: string;
  /** An API key (`pk_…`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** A `fetch` to use instead of the global one (tests, proxies, retries). */
  fetch?: ClientOptions['fetch'];
  /** Headers sent with every request (e.g. `X-Request-Id`); `Authorization` is set from `apiKey`. */
  headers?: Record<string, string>;
}

/** A client whose every request carries the key; its calls are typed by the platform's document. */
export function createPlatformClient({ baseUrl, apiKey, fetch, headers }: PlatformClientOptions): PlatformClient {
  return createClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    ...(fetch ? { fetch } : {}),
    headers: { ...headers, Authorization: `Bearer ${apiKey}` },
  });
}
