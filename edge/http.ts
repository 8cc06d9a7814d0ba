/**
 * Route definitions: one zod schema per request part drives parsing, validation, the handler's
 * types and the OpenAPI document. defineRoute only records; edge/app.ts mounts them.
 */
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';

import type { H3Event } from 'h3';
import { getQuery, getRequestHeader, getRouterParams } from 'h3';
import { z } from 'zod';

import { config } from '../activities/core/config.ts';
import { PlatformError, tooLarge } from '../activities/core/errors.ts';
import type { Principal } from '../activities/identity/index.ts';
import { type ErrorShape, MalformedJson, zodToPlatform } from './errors.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface UploadedFile {
  filename: string;
  contentType: string;
  data: Buffer;
}

interface Ctx<B, Q, P, F> {
  event: H3Event;
  principal: Principal;
  body: B;
  query: Q;
  params: P;
  form: F;
  file?: UploadedFile;
}

/** Who may call a route: no key, any valid key, an admin key, a system_admin key. */
export type AuthLevel = 'none' | 'key' | 'admin' | 'sysadmin';
export interface RouteDef<B = unknown, Q = unknown, P = unknown, F = unknown> {
  method: Method;
  /** h3 paths (`/x/:id`); the first is documented, the rest are aliases */
  paths: string[];
  summary: string;
  tag: string;
  auth: AuthLevel;
  errors?: ErrorShape;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** multipart/form-data: text fields and whether `file` is required */
  form?: { fields: z.ZodType<F>; file: boolean };
  response?: z.ZodType;
  /** content type of a binary answer (image/jpeg) */
  produces?: string;
  /** the handler honours an `Idempotency-Key` header (documented as a header parameter) */
  idempotent?: boolean;
  /** the JSON body carries a base64 file: its limit is MAX_UPLOAD_MB (encoded) instead of 1 MB */
  jsonUpload?: boolean;
  status?: number;
  /**
   * Other statuses the route answers, with what they mean: `{ 409: 'The name is taken' }`. A 2xx,
   * or one given as `{ description, answer: true }` (a health check's 503), carries the route's
   * answer schema; one given with its own `schema` (named by its zod `id`) that one; the others
   * the route's error schema. The statuses every route of its kind answers (400, 401, 404, 429,
   * ...: see operationOf in edge/openapi.ts) are documented without this.
   */
  statuses?: Record<
    number,
    string | { description: string; answer: true } | { description: string; schema: z.ZodType }
  >;
  /** unauthenticated routes are rate limited per client address */
  rateLimit?: 'key' | 'ip' | 'none';
  /**
   * The audit trail (edge/audit-trail.ts): a POST, PUT, PATCH or DELETE made with an admin or
   * system_admin key that succeeds leaves one record. `false` for a mutating route that changes
   * nothing (analysis, search, previews); otherwise the record's action and target where the ones
   * derived from the tag, method and path would be poor.
   */
  audit?: false | RouteAudit<B, Q, P>;
  // A method, so a route of any body, query and path types is a RouteDef (the registry's type).
  handler(ctx: Ctx<B, Q, P, F>): Promise<unknown> | unknown;
}

/** What a route's audit record says it changed, when the derived action and target would be poor. */
interface RouteAudit<B = unknown, Q = unknown, P = unknown> {
  /** a stable dotted name: `webhook_endpoint.create`, `api_key.revoke` */
  action?: string;
  /**
   * what was changed: from the path, the body or the answer (a created id). A target of type
   * `user` is recorded as the platform user id its id resolves to, whatever the request named.
   */
  target?(c: {
    params: P;
    body: B;
    query: Q;
    result: unknown;
    principal: Principal;
  }): { type: string; id: string | number } | undefined;
  /**
   * The body's fields (and the fields components note) recorded as they are: configuration and
   * catalogue fields that are never a person's words (`url`, `gift_name`, `metadata.template`;
   * dotted paths walk into objects and arrays; `*`: every field). Every other string is recorded
   * as its length unless the route's schema lists it (an enum), it is a platform id or a date; user
   * references are recorded as the platform user id (activities/audit/mask.ts). An allow-list: a
   * field added later is recorded safely until a route declares it here.
   */
  keep?: readonly string[];
}

export const routes: RouteDef[] = [];

/**
 * A scalar of a route's answer by its path (`answerField(result, 'gift', 'id')`), for an audit
 * target named by what the route created; throws when it is not there (the trail then derives one).
 */
export function answerField(result: unknown, ...path: string[]): string | number {
  let at: unknown = result;
  for (const key of path) at = at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  if (typeof at !== 'string' && typeof at !== 'number') throw new Error(`no ${path.join('.')} in the answer`);
  return at;
}

export function defineRoute<B = undefined, Q = undefined, P = undefined, F = undefined>(
  def: RouteDef<B, Q, P, F>,
): void {
  routes.push(def);
}

const JSON_LIMIT = 1024 * 1024;

/** Reads the body with a hard byte limit: oversized uploads get 413 without being buffered whole. */
export async function readBodyLimited(event: H3Event, limit: number): Promise<Buffer> {
  const declared = Number(getRequestHeader(event, 'content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit)
    throw tooLarge(`Request body is larger than the ${formatLimit(limit)} limit`);
  const req = event.node.req;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.resume(); // drain the rest so the 413 can be written
        reject(tooLarge(`Request body is larger than the ${formatLimit(limit)} limit`));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

const formatLimit = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB` : `${Math.round(bytes / 1024)} KB`;

/** A JSON body carrying a base64 upload of at most `bytes`, plus room for the other fields. */
export const base64Room = (bytes: number) => Math.ceil(bytes / 3) * 4 + 64 * 1024;

export async function readJson(event: H3Event, limit = JSON_LIMIT): Promise<unknown> {
  const raw = await readBodyLimited(event, limit);
  if (!raw.length) return {};
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new MalformedJson((err as Error).message);
  }
}

export async function readForm(
  event: H3Event,
  limit: number,
): Promise<{ fields: Record<string, string>; file?: UploadedFile }> {
  const type = getRequestHeader(event, 'content-type') ?? '';
  if (!/^multipart\/form-data/i.test(type))
    throw new PlatformError('unsupported_media', 'Expected multipart/form-data with a `file` field');
  // The limit covers the whole request: the file plus a little room for the other fields.
  const raw = await readBodyLimited(event, limit + 64 * 1024);
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { 'content-type': type } }).formData();
  } catch {
    throw new PlatformError('malformed', 'Malformed multipart/form-data body');
  }
  const fields: Record<string, string> = {};
  let file: UploadedFile | undefined;
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') fields[name] = value;
    else if (name === 'file' && !file) {
      const data = Buffer.from(await value.arrayBuffer());
      if (data.length > limit) throw tooLarge(`File is larger than the ${formatLimit(limit)} limit`);
      file = { filename: value.name || 'upload', contentType: value.type || 'application/octet-stream', data };
    }
  }
  return { fields, file };
}

export function parseWith<T>(
  schema: z.ZodType<T> | undefined,
  value: unknown,
  where: 'body' | 'query' | 'path' | 'form',
): T {
  if (!schema) return undefined as T;
  const result = schema.safeParse(value);
  if (!result.success) throw zodToPlatform(result.error, where);
  return result.data;
}

export const queryOf = (event: H3Event) => getQuery(event) as Record<string, unknown>;
export const paramsOf = (event: H3Event) => {
  const raw = getRouterParams(event) as Record<string, string>;
  const decoded: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    try {
      decoded[k] = decodeURIComponent(v);
    } catch {
      throw new PlatformError('malformed', `Malformed path parameter: ${k}`);
    }
  }
  return decoded;
};

/** A JSON answer with a status other than the route's default. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers?: Record<string, string>,
  ) {}
}

/** A binary answer streamed from storage (an export's zip) instead of held in memory. */
export class StreamedFile {
  constructor(
    readonly stream: Readable,
    readonly size: number,
    readonly filename?: string,
    /** one of the route's `produces` types, when it lists several (a signed link's file) */
    readonly contentType?: string,
  ) {}
}

/** An address as written by a socket or a proxy (`::ffff:1.2.3.4`, `[::1]:443`, `1.2.3.4:80`), or undefined if it is none. */
function plainAddress(text: string | undefined): string | undefined {
  let a = text?.trim();
  if (!a) return undefined;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1];
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'));
  if (a.toLowerCase().startsWith('::ffff:') && isIP(a.slice(7)) === 4) a = a.slice(7);
  return isIP(a) ? a : undefined;
}

/**
 * The client's address, for every per-address limit and log. The socket's peer by default: a
 * client writes X-Forwarded-For as it likes, so the header is believed only as far as TRUST_PROXY
 * (the number of proxies in front of the edge) says. Each trusted proxy appends the address it was
 * connected from, so the client is the entry TRUST_PROXY hops from the right; anything further left
 * came from the client.
 */
export function clientAddress(event: H3Event): string {
  const socket = plainAddress(event.node.req.socket?.remoteAddress) ?? 'unknown';
  const hops = config().TRUST_PROXY;
  if (!hops) return socket;
  const header = event.node.req.headers['x-forwarded-for'];
  const entries = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (!entries.length) return socket;
  return plainAddress(entries[Math.max(0, entries.length - hops)]) ?? socket;
}
