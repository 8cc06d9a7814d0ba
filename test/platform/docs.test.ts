/**
 * The API reference without a browser: /docs is Swagger UI served from this edge only (no CDN,
 * no inline script, a strict Content-Security-Policy), and /openapi.json is a document it can
 * render: every $ref resolves, every answer and error is a named schema, operationIds are unique.
 * `npm run check:docs` (test/docs-check.ts) drives the page in headless Chromium.
 */
import '../../edge/app.ts';

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { routes } from '../../edge/http.ts';
import { call } from '../helpers/api.ts';

type Json = Record<string, any>;
const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

let doc: Json;
beforeAll(async () => {
  doc = (await call('GET', '/openapi.json')).body;
});

function operations(): { label: string; op: Json }[] {
  return Object.entries<Json>(doc.paths).flatMap(([p, ops]) =>
    Object.entries<Json>(ops)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]) => ({ label: `${m.toUpperCase()} ${p}`, op })),
  );
}

/** Every `$ref` in the document, with where it is. */
function refs(node: unknown, at = '#', out: { ref: string; at: string }[] = []) {
  if (Array.isArray(node)) node.forEach((v, i) => refs(v, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref') out.push({ ref: String(v), at });
      else refs(v, `${at}/${k}`, out);
    }
  }
  return out;
}

const resolve = (pointer: string) =>
  pointer
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, key) => (node === undefined ? undefined : node[key]), doc);

describe('the reference page /docs', () => {
  it('is Swagger UI from local files only, under a Content-Security-Policy without inline script', async () => {
    const res = await call('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toMatch(/style-src 'self'(;|$)/);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = res.raw.toString();
    const urls = [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThanOrEqual(4);
    for (const u of urls) expect(u, u).toMatch(/^(\/(?!\/)|data:)/); // this origin, or inline data
    // No inline script or style: each <script> only loads a file.
    for (const m of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(m[1]).toMatch(/\ssrc="/);
      expect(m[2].trim()).toBe('');
    }
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).toMatch(/swagger-ui-bundle\.js/);
  });

  it('serves its files with their content types, from swagger-ui-dist, cached by version', async () => {
    const html = (await call('GET', '/docs')).raw.toString();
    const assets = [...html.matchAll(/\s(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.map((a) => a.split('?')[0]).sort()).toEqual([
      '/docs/assets/index.css',
      '/docs/assets/init.js',
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/assets/swagger-ui.css',
    ]);
    for (const url of assets) {
      const res = await call('GET', url);
      expect(res.status, url).toBe(200);
      const name = url.split('?')[0].split('/').pop()!;
      expect(res.headers.get('content-type'), url).toMatch(
        name.endsWith('.js') ? /^text\/javascript; charset=utf-8$/ : /^text\/css; charset=utf-8$/,
      );
      expect(res.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      if (name !== 'init.js')
        expect(res.raw.equals(fs.readFileSync(path.join(dist, name))), `${name} is the package's file`).toBe(true);
    }
    // Without the page's version the file may change under the same URL: a short cache only.
    const unversioned = await call('GET', '/docs/assets/swagger-ui.css');
    expect(unversioned.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('configures Swagger UI for this edge: its document, a remembered key, filter and try-it', async () => {
    const init = (await call('GET', '/docs/assets/init.js')).raw.toString();
    expect(init).toMatch(/url: '\/openapi\.json'/);
    for (const setting of [
      'persistAuthorization',
      'filter',
      'tryItOutEnabled',
      'deepLinking',
      'displayRequestDuration',
    ])
      expect(init).toMatch(new RegExp(`${setting}: true`));
    expect(init).toMatch(/validatorUrl: null/); // no call to an outside validator
  });

  it('answers 404 for any other file, including paths out of the package', async () => {
    for (const p of [
      '/docs/assets/nope.js',
      '/docs/assets/package.json',
      '/docs/assets/..%2F..%2Fpackage.json',
      '/docs/assets/swagger-ui-bundle.js.map',
    ]) {
      const res = await call('GET', p);
      expect(res.status, p).toBe(404);
      expect(res.body, p).toEqual({ detail: 'Not found' });
    }
  });
});

describe('the OpenAPI document', () => {
  it('resolves every $ref inside the document, to components only', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(200);
    for (const { ref, at } of all) {
      expect(ref, at).toMatch(/^#\/components\/schemas\/[A-Za-z0-9]+$/);
      expect(resolve(ref), `${ref} at ${at}`).toBeDefined();
    }
    expect(JSON.stringify(doc)).not.toMatch(/"\$defs"|__shared|"\$id"|"\$schema"/);
  });

  it('gives every operation a 2xx answer with a schema, named in components when JSON', () => {
    for (const { label, op } of operations()) {
      const ok = Object.entries<Json>(op.responses).filter(([s]) => /^2\d\d$/.test(s));
      expect(ok.length, label).toBeGreaterThan(0);
      // A second success status (201 when created, 202 while still processing) answers the same.
      for (const [, other] of ok.slice(1)) expect(other.content, label).toEqual(ok[0][1].content);
      const content = ok[0][1].content as Json;
      expect(Object.keys(content).length, label).toBeGreaterThan(0);
      for (const [type, media] of Object.entries<Json>(content)) {
        if (type === 'application/json')
          expect(media.schema.$ref, `${label}: JSON answer as a named schema`).toMatch(
            /^#\/components\/schemas\/\w+Response$|^#\/components\/schemas\/\w+$/,
          );
        else expect(media.schema, label).toEqual({ type: 'string', format: 'binary' });
      }
    }
    // The route definitions themselves: a route added without a response schema fails here.
    const undocumented = routes.filter((r) => !r.response && !r.produces).map((r) => `${r.method} ${r.paths[0]}`);
    expect(undocumented).toEqual([]);
  });

  it('answers errors with the shared ErrorDetail, or ErrorSuccess for gifts and text processing', () => {
    expect(doc.components.schemas.ErrorDetail.required).toEqual(['detail']);
    expect(doc.components.schemas.ErrorSuccess.required).toEqual(['success', 'error']);
    const byPath = new Map<string, (typeof routes)[number]>(
      routes.flatMap((r) => r.paths.map((p) => [`${r.method} ${p.replace(/:([A-Za-z_]+)/g, '{$1}')}`, r] as const)),
    );
    for (const { label, op } of operations()) {
      const errors = Object.entries<Json>(op.responses).filter(([s]) => /^[45]\d\d$/.test(s));
      expect(errors.length, label).toBeGreaterThan(0);
      const route = byPath.get(label);
      const shape = route?.errors === 'success' ? 'ErrorSuccess' : 'ErrorDetail';
      for (const [status, r] of errors) {
        // A status the route documents with an answer of its own: a health check's 503 (its
        // report), a refused payment's 402 (the purchase too); still a named schema.
        const said = route?.statuses?.[Number(status)];
        if (typeof said === 'object')
          expect(r.content['application/json'].schema.$ref, `${label} ${status}`).toMatch(
            /^#\/components\/schemas\/\w+$/,
          );
        else
          expect(r.content['application/json'].schema, `${label} ${status}`).toEqual({
            $ref: `#/components/schemas/${shape}`,
          });
      }
    }
    expect(doc.paths['/api/gifts/gifts'].get.responses['401'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorSuccess',
    );
  });

  it('names shared parts once: a gift is the same Gift schema in the list and in one gift', () => {
    const list = resolve(doc.paths['/api/gifts/gifts'].get.responses['200'].content['application/json'].schema.$ref);
    const one = resolve(
      doc.paths['/api/gifts/gifts/{gift_id}'].get.responses['200'].content['application/json'].schema.$ref,
    );
    expect(list.properties.gifts.items).toEqual({ $ref: '#/components/schemas/Gift' });
    expect(one.properties.gift).toEqual({ $ref: '#/components/schemas/Gift' });
    expect(doc.components.schemas.Gift.required).toEqual(expect.arrayContaining(['id', 'gift_name', 'gift_type']));
    // The scheduler's answers: its events and runs
    const runs = resolve(
      doc.paths['/scheduler/events/{event_id}/runs'].get.responses['200'].content['application/json'].schema.$ref,
    );
    expect(runs.properties.runs.items).toEqual({ $ref: '#/components/schemas/SchedulerRun' });
    const b = resolve(
      doc.paths['/api/scheduler-service/events'].get.responses['200'].content['application/json'].schema.$ref,
    );
    expect(b.properties.events.items).toEqual({ $ref: '#/components/schemas/SchedulerServiceEvent' });
  });

  it('has unique operationIds, described tags, and both key schemes on every keyed operation', () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(ids.every((id) => /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Map<string, Json>(doc.tags.map((t: Json) => [t.name, t]));
    for (const { label, op } of operations()) {
      expect(op.tags.length, label).toBe(1);
      expect(tags.get(op.tags[0])?.description, `${label}: tag ${op.tags[0]} is described`).toBeTruthy();
      if (op.security) expect(op.security, label).toEqual([{ bearer: [] }, { apiKey: [] }]);
      expect(op.summary, label).not.toMatch(/`/); // summaries are plain text in the reference
    }
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it('documents the Idempotency-Key header on the operations that honour it, and only there', () => {
    const withHeader: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if ((op.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key'))
          withHeader.push(`${method.toUpperCase()} ${path}`);
      }
    }
    for (const op of [
      'POST /process_image',
      'POST /process_document',
      'POST /generate_thumbnail',
      'POST /support/transcribe',
      'POST /retail/receipts',
      'POST /api/ticket-scan/loyalty/ticket-scan',
      'POST /api/gifts/gifts/{gift_id}/redeem',
      'POST /email/send',
      'POST /loyalty/award-points/{idp_id}',
      'POST /api/billing/purchase-tokens',
    ]) {
      expect(withHeader, op).toContain(op);
    }
    expect(withHeader.every((o) => o.startsWith('POST '))).toBe(true);
  });

  it('describes how to authenticate and the error shapes, in Markdown', () => {
    const text = doc.info.description as string;
    expect(text).toMatch(/^### Authenticate$/m);
    expect(text).toMatch(/\*\*Authorize\*\*/);
    expect(text).toMatch(/X-API-Key/);
    expect(text).toMatch(/^### Errors$/m);
    expect(text).toMatch(/ErrorDetail/);
  });
});
