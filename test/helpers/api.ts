/** HTTP helpers for tests: every test talks to the real edge over HTTP. */
import { randomBytes } from 'node:crypto';

import { inject } from 'vitest';

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
