/**
 * A hash of what `npm run build` compiles (the four source folders, the lockfile and the compiler
 * settings). The build writes it into dist/; PLATFORM_RUN=compiled refuses a dist/ whose hash is
 * not the sources' own, so a suite never runs a stale build against tests of newer sources.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const STAMP_FILE = 'source-stamp.txt';
// client/src and client/console/src: the console (dist/console) is built from them.
const COMPILED_DIRS = ['edge', 'workflows', 'activities', 'workers', 'client/src', 'client/console/src'];
const ALSO = ['package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** Every file of the compiled folders, relative to `root`. */
export function sourceFiles(root: string): string[] {
  return COMPILED_DIRS.flatMap((dir) =>
    fs
      .readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name))),
  );
}

export function sourceStamp(root: string): string {
  const hash = createHash('sha256');
  for (const rel of [...ALSO, ...sourceFiles(root)].sort()) {
    hash.update(`${rel}\0`);
    hash.update(fs.readFileSync(path.join(root, rel)));
  }
  return hash.digest('hex');
}
