/**
 * The API reference: the OpenAPI document, and Swagger UI (npm swagger-ui-dist) rendering it at
 * /docs. Its files are read once at start and served by the edge itself: no CDN, so the page
 * works offline, and a strict Content-Security-Policy (only this origin, no inline script).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { getQuery, type H3Event, setResponseHeader } from 'h3';
import { z } from 'zod';

import { notFound } from '../../activities/core/errors.ts';
import { defineRoute } from '../http.ts';
import { openApiJson } from '../openapi.ts';

const ASSETS_PATH = '/docs/assets';

// Settings of Swagger UI (https://swagger.io/docs/open-source-tools/swagger-ui/usage/configuration/).
const INIT_JS = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  filter: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  validatorUrl: null,
  // Resolve every operation once the document is in: an operation opened before its definition
  // was resolved is not drawn again when it arrives, and its Execute then sends nothing.
  onComplete: () => window.ui.specActions.requestResolvedSubtree(['paths']),
});
`;

interface Asset {
  type: string;
  body: string;
  version: string;
}

function loadAssets(): Map<string, Asset> {
  const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files: [string, string, string][] = [
    [
      'swagger-ui-bundle.js',
      'text/javascript; charset=utf-8',
      fs.readFileSync(path.join(dist, 'swagger-ui-bundle.js'), 'utf8'),
    ],
    ['swagger-ui.css', 'text/css; charset=utf-8', fs.readFileSync(path.join(dist, 'swagger-ui.css'), 'utf8')],
    ['index.css', 'text/css; charset=utf-8', fs.readFileSync(path.join(dist, 'index.css'), 'utf8')],
    ['init.js', 'text/javascript; charset=utf-8', INIT_JS],
  ];
  const hash = (body: string) => createHash('sha256').update(body).digest('hex').slice(0, 12);
  return new Map(files.map(([name, type, body]) => [name, { type, body, version: hash(body) }]));
}

const assets = loadAssets();
const assetUrl = (name: string) => `${ASSETS_PATH}/${name}?v=${assets.get(name)!.version}`;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:", // Swagger UI's icons are data: URIs in its stylesheet
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Platform API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('swagger-ui.css')}">
<link rel="stylesheet" href="${assetUrl('index.css')}">
</head>
<body>
<div id="swagger-ui"></div>
<noscript>The reference needs JavaScript; the document itself is <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="${assetUrl('swagger-ui-bundle.js')}"></script>
<script src="${assetUrl('init.js')}"></script>
</body>
</html>
`;

function securityHeaders(event: H3Event) {
  setResponseHeader(event, 'x-content-type-options', 'nosniff');
  setResponseHeader(event, 'referrer-policy', 'no-referrer');
}

defineRoute({
  method: 'GET',
  paths: ['/openapi.json'],
  tag: 'system',
  summary: 'OpenAPI 3.1 document generated from the zod schemas the handlers use',
  auth: 'none',
  response: z.record(z.string(), z.unknown()).describe('this document'),
  handler: ({ event }) => {
    setResponseHeader(event, 'content-type', 'application/json; charset=utf-8');
    return openApiJson();
  },
});

// Built once, as soon as every route module has registered (they are imported together), so no
// request waits for it; a failure here shows on the first request of /openapi.json.
setImmediate(() => {
  try {
    openApiJson();
  } catch (err) {
    process.stderr.write(`docs: the OpenAPI document could not be built: ${(err as Error).stack ?? String(err)}\n`);
  }
});

defineRoute({
  method: 'GET',
  paths: ['/docs'],
  tag: 'system',
  summary: 'Interactive API reference (Swagger UI): Authorize with a key, then try any operation',
  auth: 'none',
  produces: 'text/html; charset=utf-8',
  handler: ({ event }) => {
    securityHeaders(event);
    setResponseHeader(event, 'content-security-policy', CSP);
    setResponseHeader(event, 'cache-control', 'no-cache');
    return PAGE;
  },
});

defineRoute({
  method: 'GET',
  paths: [`${ASSETS_PATH}/:file`],
  tag: 'system',
  summary: 'The files of the reference page (Swagger UI, served by the edge)',
  auth: 'none',
  produces: 'text/javascript, text/css',
  params: z.object({ file: z.string() }),
  handler: ({ event, params }) => {
    const asset = assets.get(params.file);
    if (!asset) throw notFound('Not found');
    securityHeaders(event);
    setResponseHeader(event, 'content-type', asset.type);
    setResponseHeader(event, 'content-length', Buffer.byteLength(asset.body));
    // The page names each file with its content's hash: a versioned URL never changes.
    const versioned = getQuery(event).v === asset.version;
    setResponseHeader(
      event,
      'cache-control',
      versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
    );
    return asset.body;
  },
});
