/**
 * DOCX reading with fflate: the text of word/document.xml and the title/author of
 * docProps/core.xml. Zip bombs are refused: only those parts are inflated, each capped by its
 * declared and its actual size.
 */
import { unzipSync } from 'fflate';

import { PlatformError } from '../core/errors.ts';

const MAX_PART_BYTES = 20 * 1024 * 1024;
const PARTS = new Set(['word/document.xml', 'docProps/core.xml', 'docProps/app.xml', '[Content_Types].xml']);

export function isDocx(buf: Buffer): boolean {
  try {
    const names: string[] = [];
    unzipSync(buf, { filter: (f) => (names.push(f.name), false) });
    return names.includes('word/document.xml') && names.includes('[Content_Types].xml');
  } catch {
    return false;
  }
}

const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

export interface DocxInfo {
  text: string;
  title: string | null;
  author: string | null;
  pages: number | null;
}

export function readDocx(buf: Buffer): DocxInfo {
  let parts: Record<string, Uint8Array>;
  try {
    parts = unzipSync(buf, {
      filter: (f) => {
        if (!PARTS.has(f.name)) return false;
        if (f.originalSize > MAX_PART_BYTES)
          throw new PlatformError(
            'invalid',
            `file: ${f.name} would inflate to ${f.originalSize} bytes (zip bomb?)`,
            'file',
          );
        return true;
      },
    });
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    throw new PlatformError('invalid', `file: corrupt DOCX (${(err as Error).message})`, 'file');
  }
  for (const [name, data] of Object.entries(parts)) {
    if (data.length > MAX_PART_BYTES)
      throw new PlatformError('invalid', `file: ${name} inflates beyond ${MAX_PART_BYTES} bytes (zip bomb?)`, 'file');
  }
  const xml = Buffer.from(parts['word/document.xml'] ?? new Uint8Array()).toString('utf8');
  const text = unescape(
    xml
      .replace(/<w:tab\/>/g, '\t')
      .replace(/<\/w:p>/g, '\n')
      .replace(/<w:br\/>/g, '\n')
      .replace(/<[^>]+>/g, ''),
  )
    .replace(/[ \t]+\n/g, '\n')
    .trim();
  const core = Buffer.from(parts['docProps/core.xml'] ?? new Uint8Array()).toString('utf8');
  const app = Buffer.from(parts['docProps/app.xml'] ?? new Uint8Array()).toString('utf8');
  const tag = (x: string, name: string) => {
    const m = new RegExp(`<${name}[^>]*>([^<]*)</${name}>`).exec(x);
    return m && m[1].trim() ? unescape(m[1].trim()) : null;
  };
  const pages = tag(app, 'Pages');
  return { text, title: tag(core, 'dc:title'), author: tag(core, 'dc:creator'), pages: pages ? Number(pages) : null };
}
