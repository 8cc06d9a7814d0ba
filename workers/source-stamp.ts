/**
 * A hash of what `npm run build` compiles (the four source folders, the lockfile and the compiler
 * settings). The build writes it into dist/; PLATFORM_RUN=compiled refuses a dist/ whose hash is
 * not the sources' own, so a suite never runs a stale build against tests of newer sources.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const STAMP_FILE = 'source-stamp.txt';
export const COMPILED_DIRS = ['edge', 'workflows', 'activities', 'workers'];
const ALSO = ['package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

export function sourceStamp(root: string): string {
  const files: string[] = [...ALSO];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.isFile()) files.push(rel);
    }
  };
  for (const dir of COMPILED_DIRS) walk(dir);
  const hash = createHash('sha256');
  for (const rel of files.sort()) {
    hash.update(`${rel}\0`);
    hash.update(fs.readFileSync(path.join(root, rel)));
  }
  return hash.digest('hex');
}
