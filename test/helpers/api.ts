/** HTTP helpers for tests: every test talks to the real edge over HTTP. */
import { randomBytes } from 'node:crypto';

import { inject } from 'vitest';

import type { paths } from '../../client/src/schema.ts';
import { enforceContract } from './contract.ts';

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  raw: Buffer;
}

export interface CallOptions {
  key?: string;
  json?: unknown;
  /** raw body (sent as-is with the given content type) */
  body?: string | Buffer;
  contentType?: string;
  form?: FormData;
  headers?: Record<string, string>;
  /**
   * Skips the OpenAPI check of this answer (test/helpers/contract.ts): only for a test that
   * deliberately provokes an answer outside the contract. Say why, in the string.
   */
  outsideContract?: string;
  /** another edge than the suite's (a test's own platform): its answers are checked the same way */
  baseUrl?: string;
}

/** A path of the OpenAPI document, as written there: `/loyalty/points/{user_id}`. */
export type ApiPath = keyof paths;
type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The methods the document declares for a path. */
export type MethodOf<P extends ApiPath> = {
  [M in HttpMethod]: paths[P][M] extends { responses: unknown } ? M : never;
}[HttpMethod];
type Responses<P extends ApiPath, M extends MethodOf<P>> = paths[P][M] extends { responses: infer R } ? R : never;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;
/** The statuses the document declares for an operation, and its 2xx ones. */
export type StatusOf<P extends ApiPath, M extends MethodOf<P>> = keyof Responses<P, M> & number;
type SuccessOf<P extends ApiPath, M extends MethodOf<P>> = Extract<StatusOf<P, M>, 200 | 201 | 202 | 204>;
/**
 * The JSON body of `method path` answered with `status` (by default its 2xx answers), from the
 * generated client's types (client/src/schema.ts): `Body<'/loyalty/points/{user_id}', 'get'>`.
 */
export type Body<P extends ApiPath, M extends MethodOf<P>, S extends StatusOf<P, M> = SuccessOf<P, M>> = JsonOf<
  Responses<P, M>[S]
>;

export interface ApiOptions extends CallOptions {
  /** values for the `{name}` parts of the path */
  params?: Record<string, string | number>;
  /** a query string, left out where undefined */
  query?: Record<string, string | number | boolean | undefined>;
}

/**
 * A call named by the document's path and method, whose body is typed from the generated client:
 * `await api('get', '/loyalty/points/{user_id}', { key, params: { user_id } })`. The path must be
 * one the document declares (a typo does not compile); `S` picks the answer a test expects when
 * it is not the success: `api<'/x', 'post', 409>(...)`. Answers are checked against the document
 * at run time exactly as with `call`.
 */
export async function api<P extends ApiPath, M extends MethodOf<P>, S extends StatusOf<P, M> = SuccessOf<P, M>>(
  method: M,
  path: P,
  opts: ApiOptions = {},
): Promise<Res<Body<P, M, S>>> {
  const { params = {}, query, ...rest } = opts;
  let url = (path as string).replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`api(): no value for {${name}} in ${path}`);
    return encodeURIComponent(String(params[name]));
  });
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    if ([...q].length) url += `?${q}`;
  }
  return call<Body<P, M, S>>(method.toUpperCase(), url, rest);
}

export const edgeUrl = () => inject('edgeUrl');
export const adminKey = () => inject('adminKey');
export const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<Res<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: RequestInit['body'];
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.body !== undefined) {
    headers['content-type'] = opts.contentType ?? 'application/json';
    body = opts.body as RequestInit['body'];
  } else if (opts.form) body = opts.form;
  const base = opts.baseUrl ?? edgeUrl();
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const raw = Buffer.from(await res.arrayBuffer());
  let parsed: unknown = raw;
  const contentType = res.headers.get('content-type') ?? '';
  if (contentType.includes('json')) parsed = JSON.parse(raw.toString('utf8'));
  // Every answer is checked against the document, so the test that got an undocumented one fails.
  if (!opts.outsideContract)
    await enforceContract({ edgeUrl: base, contractDir: inject('contractDir') }, method, path, {
      status: res.status,
      contentType,
      body: parsed,
    });
  return { status: res.status, headers: res.headers, body: parsed as T, raw };
}

export function fileForm(
  fields: Record<string, string>,
  file?: { data: Buffer; name: string; type?: string },
): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', new Blob([file.data], { type: file.type ?? 'application/octet-stream' }), file.name);
  return form;
}

export interface Tenant {
  organization_id: string;
  adminKey: string;
  admin: { user_id: string; idp_id: string };
}

/** A fresh organization with an admin key, so tests never share state by accident. */
export async function newTenant(tier: 'free' | 'business' | 'enterprise' = 'free'): Promise<Tenant> {
  const org = await call('POST', '/api/organizations', { key: adminKey(), json: { name: unique('Org'), tier } });
  if (org.status !== 201) throw new Error(`creating an organization failed: ${org.status} ${JSON.stringify(org.body)}`);
  const organization_id = org.body.organization.organization_id as string;
  const idp = unique('admin');
  const key = await call('POST', '/generate_api_key', {
    key: adminKey(),
    json: { user_id: idp, organization_id, permissions: ['admin'] },
  });
  if (key.status !== 200) throw new Error(`creating an admin key failed: ${key.status} ${JSON.stringify(key.body)}`);
  return { organization_id, adminKey: key.body.api_key, admin: { user_id: key.body.metadata.user_id, idp_id: idp } };
}

/** A basic key for a new user of the tenant. */
export async function basicUser(
  t: Tenant,
  idp = unique('user'),
): Promise<{ key: string; user_id: string; idp_id: string }> {
  const res = await call('POST', '/generate_api_key', { key: t.adminKey, json: { user_id: idp } });
  if (res.status !== 200) throw new Error(`creating a basic key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { key: res.body.api_key, user_id: res.body.metadata.user_id, idp_id: idp };
}

/** Polls `get` every `everyMs` until `ok` holds of its value; throws naming `what` after `ms`. A throwing `get` counts as not yet. */
export async function until<T>(
  what: string,
  get: () => Promise<T>,
  ok: (v: T) => boolean,
  ms: number,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
