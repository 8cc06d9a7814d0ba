/**
 * OpenAPI 3.1 generated from the same route definitions and zod schemas the handlers use.
 * Answers and errors are named in `components.schemas` and referenced with `$ref`: each route's
 * answer as `<OperationId>Response`, a sub-schema with a zod `id` (`.meta({ id })`) under that id,
 * and an object several routes answer with under the field name it appears in (`gift` → `Gift`).
 * Request schemas stay inline: clients and the security suite read them without resolving refs.
 */
import { z } from 'zod';

import { type RouteDef, routes } from './http.ts';
import { API_DESCRIPTION, TAG_DESCRIPTIONS } from './openapi-text.ts';

type Json = Record<string, unknown>;
type Schema = z.ZodType;

const componentRef = (name: string) => `#/components/schemas/${name}`;
const ref = (name: string) => ({ $ref: componentRef(name) });

const ERROR_SCHEMAS: Record<string, Json> = {
  ErrorDetail: {
    type: 'object',
    description: 'The error answer of most routes',
    properties: {
      detail: { type: 'string', description: 'what went wrong; a 422 starts with the field: `user_id: …`' },
    },
    required: ['detail'],
  },
  ErrorSuccess: {
    type: 'object',
    description: 'The error answer of gifts and text processing',
    properties: { success: { const: false }, error: { type: 'string', description: 'what went wrong' } },
    required: ['success', 'error'],
  },
};

const inputSchema = (schema: Schema): Json => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
};

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(capital)
    .join('');

/** `GET /api/gifts/gifts/:gift_id` → `getGiftsByGiftId` (a leading `api` and repeated words dropped). */
function operationIdOf(method: string, path: string): string {
  const words: string[] = [];
  for (const segment of path.split('/').filter(Boolean)) {
    if (!words.length && segment === 'api') continue;
    const word = (segment.startsWith(':') ? 'By' : '') + pascal(segment);
    if (words[words.length - 1] !== word) words.push(word);
  }
  return method.toLowerCase() + words.join('');
}

// ---- Walking zod schemas (their definitions are plain data: `_zod.def`).
interface ZodDef {
  type: string;
  shape?: Record<string, Schema>;
  [child: string]: unknown;
}
const defOf = (s: Schema) => (s as unknown as { _zod: { def: ZodDef } })._zod.def;
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && '_zod' in v;
const CHILDREN = ['element', 'innerType', 'in', 'out', 'left', 'right', 'keyType', 'valueType', 'rest'];

/** Field names that say nothing without their component: `Metadata` becomes `SupportMetadata`. */
const GENERIC = new Set([
  'Config',
  'Data',
  'Details',
  'Entry',
  'Info',
  'Item',
  'Limit',
  'Metadata',
  'Policy',
  'Result',
  'Results',
  'Rules',
  'Settings',
  'Stats',
  'Status',
  'Summary',
]);
const singular = (word: string) =>
  word
    .replace(/ies$/, 'y')
    .replace(/(ss|sh|ch|x)es$/, '$1')
    .replace(/([^s])s$/, '$1');

/** Calls `visit` with every sub-schema of `root` once, and the property name it sits under. */
function walk(root: Schema, visit: (s: Schema, key: string | undefined) => void) {
  const seen = new Set<Schema>();
  const go = (s: Schema, key: string | undefined) => {
    if (seen.has(s)) return;
    seen.add(s);
    visit(s, key);
    const def = defOf(s);
    if (def.type === 'object' && def.shape) for (const [k, child] of Object.entries(def.shape)) go(child, k);
    // Items of an array or map are named after its field, in the singular (`gifts` → `gift`).
    for (const name of CHILDREN)
      if (isSchema(def[name])) go(def[name], (name === 'element' || name === 'valueType') && key ? singular(key) : key);
    for (const list of [def.options, def.items])
      if (Array.isArray(list)) for (const child of list) if (isSchema(child)) go(child, key);
    if (def.type === 'lazy' && typeof def.getter === 'function') go((def.getter as () => Schema)(), key);
  };
  go(root, undefined);
}

/**
 * Names every documented answer and its shared parts in one registry, converted together so that
 * each named schema appears once and every use of it is a `$ref`.
 */
function responseComponents(documented: { def: RouteDef; operationId: string }[]) {
  const registry = z.registry<{ id: string }>();
  const byName = new Map<string, Schema>();
  const nameOf = new Map<Schema, string>();
  const name = (s: Schema, wanted: string[]) => {
    if (nameOf.has(s)) return nameOf.get(s)!;
    const id = wanted.find((w) => !byName.has(w)) ?? `${wanted[wanted.length - 1]}${byName.size}`;
    byName.set(id, s);
    nameOf.set(s, id);
    registry.add(s, { id });
    return id;
  };
  const metaId = (s: Schema) => z.globalRegistry.get(s)?.id;

  const answering = documented.filter(({ def }) => def.response && !def.produces);
  const answerName = new Map<RouteDef, string>();
  for (const { def, operationId } of answering) {
    const s = def.response!;
    answerName.set(def, name(s, [metaId(s) ?? `${capital(operationId)}Response`]));
  }
  // Answers of other statuses with their own schema (a refused payment's 402).
  for (const { def, operationId } of documented) {
    for (const [status, said] of Object.entries(def.statuses ?? {}))
      if (typeof said === 'object' && 'schema' in said)
        name(said.schema, [metaId(said.schema) ?? `${capital(operationId)}${status}`]);
  }
  // Parts: explicit ids always; other objects when more than one route answers with them.
  const users = new Map<Schema, { routes: Set<RouteDef>; key?: string; tag: string }>();
  for (const { def } of answering) {
    walk(def.response!, (s, key) => {
      const id = metaId(s);
      if (id) name(s, [id]);
      if (nameOf.has(s) || defOf(s).type !== 'object') return;
      const use = users.get(s) ?? { routes: new Set(), key, tag: def.tag };
      use.routes.add(def);
      use.key ??= key;
      users.set(s, use);
    });
  }
  for (const [s, use] of users) {
    if (use.routes.size < 2 || !use.key) continue;
    const base = pascal(use.key);
    name(s, GENERIC.has(base) ? [pascal(use.tag) + base] : [base, pascal(use.tag) + base]);
  }

  const { schemas } = z.toJSONSchema(registry, { io: 'output', unrepresentable: 'any', uri: componentRef }) as {
    schemas: Record<string, Json>;
  };
  const components: Record<string, Json> = {};
  for (const id of [...byName.keys()].sort()) {
    const { $schema: _s, $id: _i, ...body } = schemas[id];
    components[id] = body;
  }
  return { components, answerName, nameOf };
}

function parametersOf(def: RouteDef): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ['path', def.params],
    ['query', def.query],
  ] as const) {
    if (!schema) continue;
    const json = inputSchema(schema as Schema) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        schema: prop,
        ...(prop.description ? { description: prop.description } : {}),
      });
    }
  }
  if (def.idempotent) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 200 },
      description: 'a retry with the same key (and the same request) returns the first answer and does nothing again',
    });
  }
  return out;
}

function successOf(def: RouteDef, answer: string | undefined): Json {
  if (def.produces) {
    const content: Json = {};
    for (const type of def.produces.split(','))
      content[type.split(';')[0].trim()] = { schema: { type: 'string', format: 'binary' } };
    return { description: 'OK', content };
  }
  return { description: 'OK', content: { 'application/json': { schema: answer ? ref(answer) : {} } } };
}

function operationOf(def: RouteDef, operationId: string, answer: string | undefined, named: Map<Schema, string>): Json {
  const errorBody = ref(def.errors === 'success' ? 'ErrorSuccess' : 'ErrorDetail');
  const err = (description: string, headers?: Json) => ({
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: errorBody } },
  });
  const retryAfter = { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } };
  const mutates = def.method !== 'GET';
  const op: Json = {
    tags: [def.tag],
    summary: def.summary.replace(/`/g, ''), // a plain line in the reference (descriptions are Markdown)
    operationId,
    parameters: parametersOf(def),
    responses: {
      [String(def.status ?? 200)]: successOf(def, answer),
      ...(def.body || def.form || def.query || def.params
        ? { '400': err('Malformed request'), '422': err('Invalid input; the message names the field') }
        : {}),
      ...(def.auth !== 'none'
        ? {
            '401': err('Missing, unknown or revoked API key'),
            '403': err('The key lacks the permission or organization'),
            '429': err('Rate limited', retryAfter),
          }
        : {}),
      ...(def.params
        ? { '404': err('Not found, or not visible to this key') }
        : def.auth !== 'none' && (def.body || def.query || def.form)
          ? { '404': err('Something the request names was not found, or is not visible to this key') }
          : {}),
      ...(def.idempotent
        ? { '409': err('The Idempotency-Key is in use by a concurrent request, or was used for another request') }
        : {}),
      ...(def.auth === 'none' && def.rateLimit === 'ip'
        ? { '429': err('Rate limited (per client address)', retryAfter) }
        : {}),
      ...(def.form
        ? { '413': err('Upload over MAX_UPLOAD_MB') }
        : def.body
          ? {
              '413': err(
                def.jsonUpload ? 'Body over its limit (the base64 file over MAX_UPLOAD_MB)' : 'Body over 1 MB',
              ),
            }
          : {}),
      ...(def.form ? { '415': err('Not multipart/form-data') } : {}),
      ...(mutates && def.audit !== false && def.auth !== 'none'
        ? { '503': err('Audited (an admin key): the audit trail is unavailable; nothing was changed') }
        : {}),
      ...Object.fromEntries(
        Object.entries(def.statuses ?? {}).map(([status, said]) => {
          const description = typeof said === 'string' ? said : said.description;
          if (typeof said === 'object' && 'schema' in said)
            return [status, { description, content: { 'application/json': { schema: ref(named.get(said.schema)!) } } }];
          return [
            status,
            Number(status) < 300 || typeof said !== 'string'
              ? { ...successOf(def, answer), description }
              : err(description, Number(status) === 429 ? retryAfter : undefined),
          ];
        }),
      ),
      '500': err('Server error (never carries a stack trace)'),
    },
  };
  // In status order: the extra statuses of `statuses` among the generic ones.
  op.responses = Object.fromEntries(Object.entries(op.responses as Json).sort(([a], [b]) => Number(a) - Number(b)));
  if (def.auth !== 'none') op.security = [{ bearer: [] }, { apiKey: [] }];
  if (def.auth === 'admin' || def.auth === 'sysadmin')
    op.description = `Requires the \`${def.auth === 'admin' ? 'admin' : 'system_admin'}\` permission.`;
  if (def.body) op.requestBody = { required: true, content: { 'application/json': { schema: inputSchema(def.body) } } };
  if (def.form) {
    const fields = inputSchema(def.form.fields) as { properties?: Json; required?: string[] };
    op.requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: { file: { type: 'string', format: 'binary' }, ...(fields.properties ?? {}) },
            required: [...(def.form.file ? ['file'] : []), ...(fields.required ?? [])],
          },
        },
      },
    };
  }
  return op;
}

let cached: Json | undefined;
let serialized: string | undefined;

/** The document as sent: built and serialized once (it is a few hundred KB). */
export function openApiJson(): string {
  serialized ??= JSON.stringify(openApiDocument());
  return serialized;
}

export function openApiDocument(): Json {
  if (cached) return cached;
  const taken = new Set<string>();
  const documented = routes.flatMap((def) =>
    def.paths.map((path, alias) => {
      let operationId = operationIdOf(def.method, path);
      for (let n = 2; taken.has(operationId); n += 1) operationId = `${operationIdOf(def.method, path)}${n}`;
      taken.add(operationId);
      return { def, path, alias, operationId };
    }),
  );
  const { components, answerName, nameOf } = responseComponents(documented.filter((d) => d.alias === 0));
  const paths: Record<string, Json> = {};
  // Aliases after every documented path, so the page lists each route's own path together.
  for (const { def, path, alias, operationId } of [
    ...documented.filter((d) => !d.alias),
    ...documented.filter((d) => d.alias),
  ]) {
    const openPath = path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const op = operationOf(def, operationId, answerName.get(def), nameOf);
    if (alias) op.description = [op.description, `Alias of \`${def.paths[0]}\`.`].filter(Boolean).join(' ');
    paths[openPath] ??= {};
    paths[openPath][def.method.toLowerCase()] = op;
  }
  const tags = [...new Set(routes.map((r) => r.tag))].map((name) => ({
    name,
    ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}),
  }));
  cached = {
    openapi: '3.1.0',
    info: { title: 'Loyalty & assistant platform', version: '0.1.0', description: API_DESCRIPTION },
    tags,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'pk_…',
          description: 'The API key as `Authorization: Bearer <key>`',
        },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The API key as `X-API-Key: <key>`' },
      },
      schemas: { ...ERROR_SCHEMAS, ...components },
    },
    paths,
  };
  return cached;
}
