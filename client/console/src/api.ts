/**
 * The console's one way to the platform: the typed client (client/src) on this origin, with the
 * admin key the operator signed in with. The key lives in this tab's sessionStorage only: never a
 * URL, never a cookie, gone when the tab closes. A system admin acting in another organization
 * has `organization_id` added to every request's query, as the API expects of it.
 */
import { createPlatformClient, type PlatformClient } from '../../src/index.ts';

const KEY = 'console.key';
const ORG = 'console.org';

export interface Signed {
  key: string;
  /** the key's own organization */
  home: string;
  /** the organization the console acts in (a system admin may pick another) */
  org: string;
  user_id: string;
  system: boolean;
}

let current: Signed | null = null;
let client: PlatformClient | null = null;

/** The platform's error answer as one sentence: `{detail}` or `{success: false, error}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function messageOf(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { detail?: unknown; error?: unknown };
    const text = typeof b.detail === 'string' ? b.detail : typeof b.error === 'string' ? b.error : null;
    if (text) return text;
    if (Array.isArray(b.detail))
      return b.detail.map((d: { msg?: string; loc?: unknown[] }) => `${(d.loc ?? []).join('.')}: ${d.msg}`).join('; ');
  }
  return `The platform answered ${status}`;
}

type Json = Record<string, unknown>;
let bodyRoutes: Promise<Set<string>> | null = null;

/**
 * The operations ("POST /loyalty/campaigns") whose JSON body takes `organization_id`: those read a
 * system admin's organization from the body, the others from the query. Read once from the
 * platform's own document, so the console follows the API as it is.
 */
function routesWithBodyOrg(): Promise<Set<string>> {
  bodyRoutes ??= fetch('/openapi.json')
    .then((r) => r.json() as Promise<{ paths: Record<string, Record<string, Json>>; components: { schemas: Json } }>)
    .then((doc) => {
      const resolve = (s: unknown): Json | undefined => {
        const ref = (s as { $ref?: string } | undefined)?.$ref;
        return (ref ? doc.components.schemas[ref.split('/').pop()!] : s) as Json | undefined;
      };
      const takesOrg = (s: unknown): boolean => {
        const schema = resolve(s);
        if (!schema) return false;
        if ((schema.properties as Json | undefined)?.organization_id) return true;
        return ['allOf', 'anyOf', 'oneOf'].some((k) => ((schema[k] as unknown[] | undefined) ?? []).some(takesOrg));
      };
      const found = new Set<string>();
      for (const [path, ops] of Object.entries(doc.paths))
        for (const [method, op] of Object.entries(ops)) {
          const body = (op as { requestBody?: { content?: Record<string, { schema?: unknown }> } }).requestBody;
          if (takesOrg(body?.content?.['application/json']?.schema)) found.add(`${method.toUpperCase()} ${path}`);
        }
      return found;
    })
    .catch((err: Error) => {
      bodyRoutes = null; // asked again next time
      throw err;
    });
  return bodyRoutes;
}

function build(s: Signed): PlatformClient {
  const c = createPlatformClient({ baseUrl: location.origin, apiKey: s.key });
  c.use({
    // A system admin acting in another organization names it on every request: in the body for
    // the operations that read it there, in the query for the others.
    async onRequest({ request, schemaPath }) {
      if (s.org === s.home) return undefined;
      const url = new URL(request.url);
      if (!url.searchParams.has('organization_id')) url.searchParams.set('organization_id', s.org);
      let body: BodyInit | null = request.body ? await request.clone().arrayBuffer() : null;
      if (body && (await routesWithBodyOrg()).has(`${request.method} ${schemaPath}`)) {
        const json = JSON.parse(new TextDecoder().decode(body)) as unknown;
        if (json && typeof json === 'object' && !Array.isArray(json) && !('organization_id' in json))
          body = JSON.stringify({ ...json, organization_id: s.org });
      }
      return new Request(url, { method: request.method, headers: request.headers, body });
    },
  });
  return c;
}

/** Signs in with a key: it must be valid and hold `admin` (checked by the platform, not here). */
export async function signIn(key: string): Promise<Signed> {
  const res = await fetch('/api/session-service/verify_api_key', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: key, permission: 'admin' }),
  });
  const body = (await res.json().catch(() => null)) as {
    valid?: boolean;
    reason?: string;
    organization_id?: string;
    user_id?: string;
    permissions?: string[];
  } | null;
  if (!res.ok) throw new ApiError(res.status, messageOf(res.status, body));
  if (!body?.valid && body?.reason === 'rate_limited')
    throw new ApiError(429, 'Too many sign-ins from this address: wait a minute and try again');
  if (!body?.valid)
    throw new ApiError(
      401,
      body?.reason === 'forbidden'
        ? 'This key is not an admin key: the console needs an admin key of your organization'
        : `This key does not sign in (${body?.reason ?? 'not valid'})`,
    );
  const s: Signed = {
    key,
    home: body.organization_id!,
    org: body.organization_id!,
    user_id: body.user_id!,
    system: (body.permissions ?? []).includes('system_admin'),
  };
  sessionStorage.setItem(KEY, key);
  sessionStorage.setItem(ORG, s.org);
  current = s;
  client = build(s);
  return s;
}

/** The session this tab signed in with, if any (after a reload, checked again). */
export async function resume(): Promise<Signed | null> {
  const key = sessionStorage.getItem(KEY);
  if (!key) return null;
  try {
    const s = await signIn(key);
    const org = sessionStorage.getItem(ORG);
    if (org && s.system) actIn(org);
    return current;
  } catch (err) {
    // Only a key the platform refuses is forgotten; a network error or a rate limit is not.
    if (err instanceof ApiError && err.status === 401) {
      signOut();
      return null;
    }
    throw err;
  }
}

/** A system admin picks the organization the console acts in. */
export function actIn(org: string): Signed {
  if (!current) throw new Error('not signed in');
  current = { ...current, org };
  sessionStorage.setItem(ORG, org);
  client = build(current);
  return current;
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ORG);
  current = null;
  client = null;
}

export function session(): Signed {
  if (!current) throw new Error('not signed in');
  return current;
}

export function api(): PlatformClient {
  if (!client) throw new Error('not signed in');
  return client;
}

/**
 * The data of a typed call, or an ApiError carrying the platform's own message:
 *   const { users } = await ok(api().GET('/api/users', { params: { query: { q } } }));
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw new ApiError(response.status, messageOf(response.status, error));
  return data as T;
}

/** A binary answer (a thumbnail, an export) fetched with the key, as an object URL for <img>/<a>. */
export async function blobUrl(path: string): Promise<string> {
  const s = session();
  const url = new URL(path, location.origin);
  // The key goes to this origin only, whatever path a caller passes.
  if (url.origin !== location.origin) throw new Error(`not a path of this platform: ${path}`);
  if (s.org !== s.home) url.searchParams.set('organization_id', s.org);
  const res = await fetch(url, { headers: { Authorization: `Bearer ${s.key}` } });
  if (!res.ok) throw new ApiError(res.status, messageOf(res.status, await res.json().catch(() => null)));
  return URL.createObjectURL(await res.blob());
}
