/**
 * The repository is its own reference: no README, doc, comment, OpenAPI text or setting may send
 * a reader to a file outside it (a clone carries docs/ and nothing else). The forbidden phrases
 * are assembled at run time so this file does not contain them itself.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

const FORBIDDEN: { name: string; pattern: RegExp }[] = [
  { name: ['CONTRACT', 'md'].join('.'), pattern: new RegExp(['CONTRACT', 'md'].join('\\.'), 'i') },
  { name: ['..', 'shared'].join('/'), pattern: new RegExp(['\\.\\.', 'shared'].join('/'), 'i') },
  { name: ['platform', 'interface'].join('-'), pattern: new RegExp(['platform', 'interface'].join('-'), 'i') },
  // Not TypeScript's `interface Document {` / `interface DocumentMetadata`.
  {
    name: ['interface', 'document'].join(' '),
    pattern: new RegExp(`\\b${['interface', 'documents?'].join('[ -]')}\\b(?!\\s*[{<]|\\s+extends)`, 'i'),
  },
];

/**
 * Files the repository carries: git's list (files not yet committed included, ignored ones not),
 * or, in an export without .git, the tree minus node_modules.
 */
function trackedFiles(): string[] {
  try {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return [...new Set(listed.split('\0').filter(Boolean))];
  } catch {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === '.git' || entry.name === 'data') continue;
        const rel = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.isDirectory()) walk(rel);
        else if (entry.isFile()) out.push(rel);
      }
    };
    walk('');
    return out;
  }
}

/** README.md, docs/**, and every Markdown, TypeScript, YAML and JSON file but the lockfile. */
const checked = (file: string) =>
  !file.split('/').includes('node_modules') &&
  path.basename(file) !== 'package-lock.json' &&
  (file === 'README.md' || file.startsWith('docs/') || /\.(md|ts|mts|cts|ya?ml|json)$/i.test(file));

describe('the repository is self-contained', () => {
  const files = trackedFiles().filter(checked);

  it('finds the files it checks', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/README.md');
    expect(files).toContain('docs/api-conventions.md');
    expect(files.filter((f) => f.endsWith('.ts')).length).toBeGreaterThan(50);
  });

  it('no file points outside the repository for its reference', () => {
    const hits: string[] = [];
    for (const file of files) {
      const full = path.join(root, file);
      if (!fs.existsSync(full)) continue; // deleted in the working tree, not yet in git's index
      fs.readFileSync(full, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const { name, pattern } of FORBIDDEN)
            if (pattern.test(line)) hits.push(`${file}:${i + 1}: ${name}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(hits, `point to docs/ (in the project's own words) instead:\n${hits.join('\n')}`).toEqual([]);
  });

  it('the docs link only to files that exist', () => {
    const broken: string[] = [];
    for (const file of files.filter((f) => f.endsWith('.md'))) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s#]+)(#[^)\s]*)?\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue; // http(s):, mailto:
        if (!fs.existsSync(path.resolve(path.dirname(path.join(root, file)), target)))
          broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
