// For the plain-JS threads and children (a thread or child does not inherit the TypeScript
// loader): imports `file` (a .ts path relative to `base`, the caller's import.meta.url). Built
// (dist/), the compiled .js sits beside the caller; from the sources it goes through tsx's API.
import { existsSync } from 'node:fs';

export async function importBeside(file, base) {
  const compiled = new URL(file.replace(/\.ts$/, '.js'), base);
  if (existsSync(compiled)) return import(compiled.href);
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(file, base);
}
