/**
 * The operator console (docs/console.md): static files built from client/console by
 * tools/console-build.ts, read once and served by the edge. No route of its own beyond these: the
 * page calls the same API as everyone, with the admin key the operator signs in with. A strict
 * Content-Security-Policy: only this origin's script and style, images from this origin or the
 * page's own blobs (a scan's thumbnail fetched with the key), no framing, no forms elsewhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type H3Event, setResponseHeader } from 'h3';
import { z } from 'zod';

import { misconfigured, notFound } from '../../activities/core/errors.ts';
import { defineRoute } from '../http.ts';

// dist/edge/routes/console.js serves dist/console (npm run build); the sources, client/console/dist
// (built by npm start and the test suite before the edge starts).
const here = path.dirname(fileURLToPath(import.meta.url));
const DIR = import.meta.url.endsWith('.js')
  ? path.join(here, '..', '..', 'console')
  : path.join(here, '..', '..', 'client', 'console', 'dist');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

interface Built {
  page: string;
  assets: Map<string, { type: string; body: string }>;
}

let built: Built | null = null;

/** The built files, read once; null while the console is not built (looked for again on each visit). */
function load(): Built | null {
  if (built) return built;
  const index = path.join(DIR, 'index.html');
  if (!fs.existsSync(index)) return null;
  const assets = new Map<string, { type: string; body: string }>();
  for (const name of fs.readdirSync(path.join(DIR, 'assets'))) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { type, body: fs.readFileSync(path.join(DIR, 'assets', name), 'utf8') });
  }
  built = { page: fs.readFileSync(index, 'utf8'), assets };
  return built;
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(event: H3Event) {
  setResponseHeader(event, 'x-content-type-options', 'nosniff');
  setResponseHeader(event, 'referrer-policy', 'no-referrer');
  setResponseHeader(event, 'x-frame-options', 'DENY');
}

defineRoute({
  method: 'GET',
  paths: ['/console'],
  tag: 'system',
  summary: 'The operator console (a page in the browser; sign in with an admin key)',
  auth: 'none',
  produces: 'text/html; charset=utf-8',
  handler: ({ event }) => {
    securityHeaders(event);
    setResponseHeader(event, 'content-security-policy', CSP);
    setResponseHeader(event, 'cache-control', 'no-cache');
    const files = load();
    if (!files) throw misconfigured('The console is not built: run npm run build (npm start builds it too)');
    return files.page;
  },
});

defineRoute({
  method: 'GET',
  paths: ['/console/assets/:file'],
  tag: 'system',
  summary: "The console's script and stylesheet (named by their content's hash)",
  auth: 'none',
  produces: 'text/javascript, text/css',
  params: z.object({ file: z.string().max(200) }),
  handler: ({ event, params }) => {
    const asset = load()?.assets.get(params.file);
    if (!asset) throw notFound('Not found');
    securityHeaders(event);
    setResponseHeader(event, 'content-type', asset.type);
    setResponseHeader(event, 'content-length', Buffer.byteLength(asset.body));
    // A file's name is its content's hash: that URL never changes.
    setResponseHeader(event, 'cache-control', 'public, max-age=31536000, immutable');
    return asset.body;
  },
});
