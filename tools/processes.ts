/**
 * How a process of the platform (the edge, a worker) is started by the local tooling (`npm start`,
 * the test suite and its drills): compiled JavaScript from dist/ under plain `node` when
 * PLATFORM_RUN=compiled asks for the build, otherwise the TypeScript sources through tsx's loader.
 * One place, so all of them run the same thing (docs/build.md). The image and docker compose run
 * `node dist/workers/<process>.js` themselves.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { sourceStamp, STAMP_FILE } from './source-stamp.ts';

/** The processes, and the image's health check (a script run the same way). */
export type PlatformProcess = 'edge' | 'worker' | 'healthcheck';

let checkedStamp = false;

/** compiled (PLATFORM_RUN=compiled: dist/ under node) or sources (tsx) */
export const runMode = (): 'compiled' | 'sources' => (process.env.PLATFORM_RUN === 'compiled' ? 'compiled' : 'sources');

/**
 * The arguments to give `node` (process.execPath) to start that process: as said above, or from
 * `mode` when given (the start-up benchmark runs both).
 */
export function processArgs(name: PlatformProcess, mode: 'compiled' | 'sources' = runMode()): string[] {
  if (mode === 'compiled') {
    const script = fileURLToPath(new URL(`../dist/workers/${name}.js`, import.meta.url));
    if (!fs.existsSync(script))
      throw new Error(`PLATFORM_RUN=compiled: ${script} is missing (run npm run build first)`);
    if (!checkedStamp) {
      const root = fileURLToPath(new URL('..', import.meta.url));
      const built = fs.readFileSync(path.join(root, 'dist', STAMP_FILE), 'utf8').trim();
      if (built !== sourceStamp(root))
        throw new Error(
          'PLATFORM_RUN=compiled: dist/ was built from other sources than these (run npm run build again)',
        );
      checkedStamp = true;
    }
    return [script];
  }
  // Node with tsx's loader, not the tsx command: one process, whose pid is the one a supervisor
  // watches and the one Temporal shows as the poller's identity (pid@host).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, fileURLToPath(new URL(`../workers/${name}.ts`, import.meta.url))];
}
