/**
 * The API contract as the suite checks it: every answer `call()` gets is validated against the
 * live OpenAPI document (`GET /openapi.json`), loaded once per test file.
 *
 * - The request (method + concrete path) is matched to its operation by path template; a path or
 *   method the document does not have (a deliberate 404/405 probe) is not checked.
 * - The status must be one the operation documents (a client generated from the document knows
 *   no other).
 * - A JSON answer is validated with Ajv (JSON Schema 2020-12) against the schema documented for
 *   its status, made strict first: an object schema that does not say otherwise is closed
 *   (`unevaluatedProperties: false`: no undocumented field) and its `required` fields must be
 *   there. A binary answer is checked by content type only.
 *
 * Each valid answer is recorded as (operationId, status) in a JSONL file under the directory the
 * global setup provides (`contractDir`), so the teardown can list operations never exercised.
 * With CONTRACT_REPORT=<file> violations are appended there instead of thrown (to collect every
 * mismatch of a run at once).
 */
import fs from 'node:fs';
import path from 'node:path';

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

type Json = Record<string, any>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const DOC_ID = 'https://contract.test/openapi.json';

interface Operation {
  method: string;
  template: string;
  operationId: string;
  pattern: RegExp;
  params: number;
  responses: Record<string, Json>;
}

export interface Contract {
  doc: Json;
  operations: Operation[];
  validator(op: Operation, status: string, media: string): ValidateFunction | undefined;
}

/** One entry of the coverage record: a valid answer seen for an operation. */
export interface Seen {
  operationId: string;
  status: number;
}

/** Keys whose value is one schema, a list of schemas, or a map of schemas (JSON Schema 2020-12). */
const ONE = [
  'items',
  'additionalProperties',
  'unevaluatedProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedItems',
];
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const MAP = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];

/** An object built from parts: `allOf`, or its own `properties` beside `anyOf`/`oneOf` branches. */
const composed = (s: Json) =>
  Array.isArray(s.allOf) || ((Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) && 'properties' in s);

const isObjectSchema = (s: Json) =>
  s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || 'properties' in s;

/**
 * Closes every object schema that does not say otherwise, in place. An object built from parts
 * (`allOf`, or its own `properties` beside `anyOf`/`oneOf` branches) is closed where the parts
 * meet, with `unevaluatedProperties`, which sees the fields every applied part evaluated; the
 * parts themselves stay open there, or each would reject the fields of the others.
 */
export function closeObjects(schema: unknown, isPart = false): void {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return;
  const s = schema as Json;
  const composes = composed(s);
  for (const key of ONE) closeObjects(s[key]);
  for (const key of MAP)
    if (s[key] && typeof s[key] === 'object') for (const child of Object.values(s[key])) closeObjects(child);
  for (const key of LIST) {
    if (!Array.isArray(s[key])) continue;
    const parts = key === 'allOf' || (key !== 'prefixItems' && composes);
    for (const child of s[key]) closeObjects(child, parts);
  }
  if (isPart) return;
  const objectLike =
    isObjectSchema(s) ||
    (composes &&
      [s.allOf, s.anyOf, s.oneOf]
        .flat()
        .some((p: Json | undefined) => p && typeof p === 'object' && (isObjectSchema(p) || '$ref' in p)));
  if (objectLike && !('additionalProperties' in s) && !('unevaluatedProperties' in s)) s.unevaluatedProperties = false;
}

const PART = '__AsPart';

/**
 * A named schema used as a part (`allOf: [{ $ref }]`) must stay open at its top there: refs from a
 * part point to an open copy (`<Name>__AsPart`, its nested objects still closed), added to
 * `components`. Rewrites `node` in place and returns the names it used as parts.
 */
function refsToParts(node: unknown, used = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => refsToParts(n, used));
  if (!node || typeof node !== 'object' || Array.isArray(node)) return used;
  const s = node as Json;
  const composes = composed(s);
  for (const key of ['allOf', ...(composes ? ['anyOf', 'oneOf'] : [])]) {
    for (const part of Array.isArray(s[key]) ? s[key] : []) {
      const m = typeof part?.$ref === 'string' ? /^#\/components\/schemas\/([^/]+)$/.exec(part.$ref) : null;
      if (m && !m[1].endsWith(PART)) {
        part.$ref = `#/components/schemas/${m[1]}${PART}`;
        used.add(m[1]);
      }
    }
  }
  for (const v of Object.values(s)) if (v && typeof v === 'object') refsToParts(v, used);
  return used;
}

/** `#/components/…` refs made absolute, so a schema compiled alone resolves them in the document. */
function absoluteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(absoluteRefs);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node))
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : absoluteRefs(v);
  return out;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function buildContract(doc: Json): Contract {
  const components: Record<string, Json> = structuredClone(doc.components?.schemas ?? {});
  const parts = new Set<string>();
  for (const s of Object.values(components)) refsToParts(s, parts);
  for (const path of Object.values<Json>(doc.paths ?? {})) refsToParts(structuredClone(path), parts);
  for (const s of Object.values(components)) closeObjects(s);
  for (const name of parts) {
    const open = structuredClone((doc.components?.schemas ?? {})[name] ?? {});
    refsToParts(open);
    closeObjects(open, true);
    components[`${name}${PART}`] = open;
  }
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  formats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ $id: DOC_ID, components: { schemas: components } });

  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths ?? {})) {
    const segments = template.split('/');
    const pattern = new RegExp(
      `^${segments.map((seg) => (/^\{[^}]+\}$/.test(seg) ? '[^/]+' : escapeRegExp(seg))).join('/')}$`,
    );
    const params = segments.filter((seg) => seg.startsWith('{')).length;
    for (const [method, op] of Object.entries<Json>(item)) {
      if (!METHODS.includes(method)) continue;
      operations.push({
        method: method.toUpperCase(),
        template,
        operationId: op.operationId,
        pattern,
        params,
        responses: op.responses ?? {},
      });
    }
  }
  const compiled = new Map<string, ValidateFunction>();
  return {
    doc,
    operations,
    validator(op, status, media) {
      const key = `${op.operationId} ${status} ${media}`;
      if (compiled.has(key)) return compiled.get(key);
      const schema = op.responses[status]?.content?.[media]?.schema;
      if (schema === undefined) return undefined;
      const copy = structuredClone(schema);
      refsToParts(copy);
      closeObjects(copy);
      const fn = ajv.compile(absoluteRefs(copy) as Json);
      compiled.set(key, fn);
      return fn;
    },
  };
}

/** The operation a concrete request path is answered by: a fixed segment wins over a template (as the router does). */
export function operationFor(contract: Contract, method: string, rawPath: string): Operation | undefined {
  const p = rawPath.split(/[?#]/)[0];
  const matches = contract.operations.filter((op) => op.method === method.toUpperCase() && op.pattern.test(p));
  if (matches.length <= 1) return matches[0];
  const rank = (op: Operation) =>
    op.template
      .split('/')
      .map((seg) => (seg.startsWith('{') ? '1' : '0'))
      .join('');
  return matches.sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0))[0];
}

/** The documented response for a status: exact, then a range (`4XX`), then `default`. */
function responseKey(op: Operation, status: number): string | undefined {
  const exact = String(status);
  if (op.responses[exact]) return exact;
  const range = `${String(status)[0]}XX`;
  if (op.responses[range]) return range;
  return op.responses.default ? 'default' : undefined;
}

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 20)
    .map((e) => {
      const extra =
        e.keyword === 'unevaluatedProperties' || e.keyword === 'additionalProperties'
          ? ` (${JSON.stringify((e.params as Json).unevaluatedProperty ?? (e.params as Json).additionalProperty)})`
          : '';
      return `  ${e.instancePath || '/'} ${e.message}${extra}`;
    })
    .join('\n');

export interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

export interface Verdict {
  operationId?: string;
  /** undefined when valid (or not checked) */
  problems?: string;
  /** the Ajv errors, for the report */
  errors?: { instancePath: string; message?: string; keyword: string; params: unknown }[];
  kind?: 'status' | 'content-type' | 'schema';
}

/** Checks one answer; `operationId` is undefined when the request is not a documented operation. */
export function check(contract: Contract, method: string, rawPath: string, answer: Answer): Verdict {
  const op = operationFor(contract, method, rawPath);
  if (!op) return {};
  const key = responseKey(op, answer.status);
  if (!key)
    return {
      operationId: op.operationId,
      kind: 'status',
      problems: `status ${answer.status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`,
    };
  const content: Json = op.responses[key].content ?? {};
  const media = answer.contentType.split(';')[0].trim().toLowerCase();
  const documented = Object.keys(content);
  if (!documented.length) return { operationId: op.operationId };
  if (!documented.includes(media))
    return {
      operationId: op.operationId,
      kind: 'content-type',
      problems: `content type ${JSON.stringify(media)} is not documented for ${key} (documented: ${documented.join(', ')})`,
    };
  const schema = content[media]?.schema as Json | undefined;
  if (!schema || schema.format === 'binary' || !/json/.test(media)) return { operationId: op.operationId };
  const validate = contract.validator(op, key, media)!;
  if (validate(answer.body)) return { operationId: op.operationId };
  const errors = (validate.errors ?? []).map(({ instancePath, message, keyword, params }) => ({
    instancePath,
    message,
    keyword,
    params,
  }));
  return {
    operationId: op.operationId,
    kind: 'schema',
    errors,
    problems: `the answer does not match its schema:\n${describeErrors(validate.errors)}`,
  };
}

// ---- The live document, once per test file, and the records.

let loaded: Promise<Contract> | undefined;

/** Where the suite runs: the edge serving the document, and the coverage record's directory. */
export interface ContractEnv {
  edgeUrl: string;
  contractDir?: string;
}

export function contract(edgeUrl: string): Promise<Contract> {
  loaded ??= (async () => {
    const res = await fetch(`${edgeUrl}/openapi.json`);
    if (res.status !== 200) throw new Error(`contract: GET /openapi.json answered ${res.status}`);
    return buildContract((await res.json()) as Json);
  })();
  return loaded;
}

/**
 * Validates an answer `call()` got (this module does not import vitest: the global setup uses it too): records it when valid; otherwise throws an Error naming the
 * request, status, operationId and the schema errors (or appends to CONTRACT_REPORT).
 */
export async function enforceContract(
  env: ContractEnv,
  method: string,
  rawPath: string,
  answer: Answer,
): Promise<void> {
  const c = await contract(env.edgeUrl);
  const verdict = check(c, method, rawPath, answer);
  if (!verdict.operationId) return;
  if (!verdict.problems) {
    if (env.contractDir)
      fs.appendFileSync(
        path.join(env.contractDir, `seen-${process.pid}.jsonl`),
        `${JSON.stringify({ operationId: verdict.operationId, status: answer.status } satisfies Seen)}\n`,
      );
    return;
  }
  const report = process.env.CONTRACT_REPORT;
  if (report) {
    const test = (globalThis as { __vitest_worker__?: { filepath?: string; current?: { name?: string } } })
      .__vitest_worker__;
    fs.appendFileSync(
      path.resolve(report),
      `${JSON.stringify({ method, path: rawPath.split('?')[0], status: answer.status, operationId: verdict.operationId, kind: verdict.kind, problems: verdict.problems, errors: verdict.errors, body: answer.body, file: test?.filepath, test: test?.current?.name })}\n`,
    );
    return;
  }
  throw new Error(
    `contract: ${method} ${rawPath} answered ${answer.status}, off the OpenAPI document (operation ${verdict.operationId}): ${verdict.problems}`,
  );
}

/** The coverage record a run left in `dir`: every (operationId, status) seen with a valid answer. */
export function readSeen(dir: string): Seen[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as Seen);
}

/** Operations of `doc` whose success answer (a documented 2xx) was never seen valid. */
export function uncovered(doc: Json, seen: Seen[]): string[] {
  const ok = new Set(seen.filter((s) => s.status >= 200 && s.status < 300).map((s) => s.operationId));
  const missing: string[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (METHODS.includes(method) && !ok.has(op.operationId))
        missing.push(`${op.operationId} (${method.toUpperCase()} ${template})`);
    }
  }
  return missing;
}
