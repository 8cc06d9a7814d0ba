/**
 * Builds the operator console (client/console/) into static files the edge serves under
 * /console: index.html and, in assets/, one script and one stylesheet named by their content's
 * hash (so they are cached for good and a new build is never mixed with an old one). esbuild
 * bundles Preact, uPlot and the typed client; nothing is fetched at run time. Written aside and
 * renamed into place. `npm run build` puts it in dist/console; `npm start` and the test suite,
 * running the sources, in client/console/dist (docs/console.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = path.join(root, 'client/console/src/main.tsx');

/** Where the sources-mode edge finds the console (edge/routes/console.ts looks in the same place). */
export const SOURCES_CONSOLE_DIR = path.join(root, 'client/console/dist');

export interface ConsoleBuild {
  dir: string;
  /** bytes of each asset, by name */
  sizes: Record<string, number>;
}

const page = (script: string, style: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Console</title>
<link rel="stylesheet" href="/console/assets/${style}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;

export async function buildConsole(dir: string): Promise<ConsoleBuild> {
  const aside = `${dir}.building-${process.pid}`;
  fs.rmSync(aside, { recursive: true, force: true });
  const assets = path.join(aside, 'assets');
  const out = await build({
    entryPoints: { app: entry },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: assets,
    entryNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'linked',
    logLevel: 'error',
    absWorkingDir: root,
  });
  const names = Object.keys(out.metafile.outputs).map((f) => path.basename(f));
  const script = names.find((n) => n.endsWith('.js'));
  const style = names.find((n) => n.endsWith('.css'));
  if (!script || !style) throw new Error(`console build: expected a script and a stylesheet, got ${names.join(', ')}`);
  fs.writeFileSync(path.join(aside, 'index.html'), page(script, style));
  const sizes: Record<string, number> = {};
  for (const n of fs.readdirSync(assets)) sizes[n] = fs.statSync(path.join(assets, n)).size;
  // The old build is moved away before the new one takes its name, then removed.
  const old = `${dir}.old-${process.pid}`;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  if (fs.existsSync(dir)) fs.renameSync(dir, old);
  fs.renameSync(aside, dir);
  fs.rmSync(old, { recursive: true, force: true });
  return { dir, sizes };
}

/** "app-….js 41.2 KiB, app-….css 6.0 KiB" */
export const describeSizes = (sizes: Record<string, number>): string =>
  Object.entries(sizes)
    .filter(([n]) => !n.endsWith('.txt'))
    .map(([n, b]) => `${n} ${(b / 1024).toFixed(1)} KiB`)
    .join(', ');

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const dir = process.argv[2] ? path.resolve(process.argv[2]) : SOURCES_CONSOLE_DIR;
  buildConsole(dir).then(
    ({ sizes }) => process.stderr.write(`console: ${path.relative(root, dir)}: ${describeSizes(sizes)}\n`),
    (err: Error) => {
      process.stderr.write(`console build: ${err.message}\n`);
      process.exit(1);
    },
  );
}
