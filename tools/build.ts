/**
 * `npm run build`: the platform as JavaScript in dist/, run by plain `node` (docs/build.md).
 *  1. tsc compiles edge/, workflows/, activities/ and workers/ (tsconfig.build.json): one .js per
 *     .ts in the same layout, relative imports rewritten from .ts to .js.
 *  2. The files the code opens beside itself are copied: threads and children in plain JS (*.mjs),
 *     the speech server (*.py).
 *  3. The workflow code is bundled once, as the SDK would bundle it at every worker start:
 *     dist/workflow-bundle.js, so a compiled worker polls without bundling.
 *  4. Checks: no compiled module imports a package the image lacks; the hash of the sources it was
 *     built from goes into dist/ (source-stamp.ts). Built aside, then renamed into place.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import ts from 'typescript';

import { WORKFLOW_BUNDLE, WORKFLOW_SOURCES } from '../workers/workflow-sources.ts';
import { buildConsole, describeSizes } from './console-build.ts';
import { sourceFiles, sourceStamp, STAMP_FILE } from './source-stamp.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = path.join(root, 'dist');
// Built aside, then renamed: an interrupted build leaves dist/ as it was, never half-written.
const building = path.join(root, `dist.building-${process.pid}`);
const ASSET = /\.(mjs|py|sh|patch)$/;

/** Copies the files the compiled code opens beside itself; returns how many. */
function copyAssets(): number {
  const assets = sourceFiles(root).filter((rel) => ASSET.test(rel));
  for (const rel of assets) {
    fs.mkdirSync(path.dirname(path.join(building, rel)), { recursive: true });
    fs.copyFileSync(path.join(root, rel), path.join(building, rel));
    fs.chmodSync(path.join(building, rel), fs.statSync(path.join(root, rel)).mode);
  }
  return assets.length;
}

/**
 * The image installs `dependencies` only (npm ci --omit=dev): a compiled module that imports
 * anything else would start here and fail there. Static imports and literal dynamic ones count;
 * the plain-JS threads' tsx fallback (*.mjs, used only when the compiled .js is missing) does not.
 */
function devImports(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const allowed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})]);
  const builtin = new Set(builtinModules);
  const found: string[] = [];
  for (const file of fs.readdirSync(building, { recursive: true }).map(String)) {
    // The console's bundle runs in the browser and imports nothing.
    if (!file.endsWith('.js') || file === WORKFLOW_BUNDLE || file.startsWith('console/')) continue;
    const text = fs.readFileSync(path.join(building, file), 'utf8');
    // TypeScript's own scanner finds the import and export specifiers (static and literal dynamic).
    for (const { fileName: spec } of ts.preProcessFile(text, true, true).importedFiles) {
      if (spec.startsWith('.') || spec.startsWith('/')) continue;
      if (spec.startsWith('node:') || builtin.has(spec.split('/')[0])) continue;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      if (!allowed.has(name)) found.push(`dist/${file}: ${spec}`);
    }
  }
  return found;
}

async function main() {
  const began = Date.now();
  const stamp = sourceStamp(root);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(
    process.execPath,
    [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', building],
    { stdio: 'inherit' },
  );
  if (compiled.status !== 0) throw new Error(`tsc failed (exit ${compiled.status})`);
  const assets = copyAssets();
  const here = path.join(root, 'workers');
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(here, WORKFLOW_SOURCES.workflowsPath),
    workflowInterceptorModules: WORKFLOW_SOURCES.interceptorModules.map((m) => path.resolve(here, m)),
    logger: new DefaultLogger('WARN'),
  });
  fs.writeFileSync(path.join(building, WORKFLOW_BUNDLE), code);
  // The console's static files (dist/console), bundled by esbuild from client/console.
  const consoleBuild = await buildConsole(path.join(building, 'console'));
  const strays = devImports();
  if (strays.length)
    throw new Error(
      `compiled code imports packages the image does not install (devDependencies or undeclared):\n  ${strays.join('\n  ')}`,
    );
  if (sourceStamp(root) !== stamp) throw new Error('the sources changed while building: build again');
  fs.writeFileSync(path.join(building, STAMP_FILE), `${stamp}\n`);
  const files = fs.readdirSync(building, { recursive: true }).filter((f) => String(f).endsWith('.js')).length;
  fs.rmSync(dist, { recursive: true, force: true });
  fs.renameSync(building, dist);
  process.stderr.write(
    `build: dist/ in ${((Date.now() - began) / 1000).toFixed(1)} s: ${files} JavaScript files, ${assets} copied beside them, ${WORKFLOW_BUNDLE} (${(code.length / 1024).toFixed(0)} KiB), console ${describeSizes(consoleBuild.sizes)}\n`,
  );
}

const cleanUp = () => fs.rmSync(building, { recursive: true, force: true });
process.once('SIGINT', () => (cleanUp(), process.exit(130)));
process.once('SIGTERM', () => (cleanUp(), process.exit(143)));
main().catch((err) => {
  cleanUp();
  process.stderr.write(`build: ${(err as Error).message}\n`);
  process.exit(1);
});
