/**
 * PDF reading with pdfjs-dist (legacy build, Node 20): page count, title/author, the text layer
 * of the first pages, and pages rendered to JPEG with @napi-rs/canvas. Encrypted and corrupt files
 * are the client's problem (422); page and text caps keep a 500-page PDF cheap.
 */
import { createCanvas } from '@napi-rs/canvas';
import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';
import { PlatformError } from '../errors';

export const MAX_TEXT_PAGES = 50;
export const MAX_TEXT_CHARS = 200_000;
/** a rendered page's longest side never exceeds this, whatever size the page claims */
const MAX_RENDER_SIDE = 2000;

export interface PdfInfo {
  pages: number;
  title: string | null;
  author: string | null;
  /** text of the first MAX_TEXT_PAGES pages, "\n\n" between pages */
  text: string;
  /** pages (1-based, among those read) that had no text layer */
  pagesWithoutText: number[];
}

type PdfDoc = Awaited<ReturnType<typeof pdfjs.getDocument>['promise']>;

async function open(buf: Buffer): Promise<PdfDoc> {
  try {
    return await pdfjs.getDocument({ data: new Uint8Array(buf), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: false }).promise;
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'PasswordException') throw new PlatformError(422, 'file: the PDF is encrypted (password protected)', 'file');
    throw new PlatformError(422, `file: corrupt or unreadable PDF (${(err as Error).message})`, 'file');
  }
}

const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);

export async function withPdf<T>(buf: Buffer, work: (pdf: PdfDoc) => Promise<T>): Promise<T> {
  const pdf = await open(buf);
  try {
    return await work(pdf);
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    throw new PlatformError(422, `file: corrupt or unreadable PDF (${(err as Error).message})`, 'file');
  } finally {
    await pdf.destroy();
  }
}

export async function readPdf(pdf: PdfDoc): Promise<PdfInfo> {
  const meta = await pdf.getMetadata().catch(() => ({ info: {} }));
  const info = (meta.info ?? {}) as Record<string, unknown>;
  const texts: string[] = [];
  const pagesWithoutText: number[] = [];
  let chars = 0;
  for (let n = 1; n <= Math.min(pdf.numPages, MAX_TEXT_PAGES) && chars < MAX_TEXT_CHARS; n += 1) {
    const page = await pdf.getPage(n);
    const content = await page.getTextContent();
    const text = content.items
      .map((i) => ('str' in i ? i.str + (i.hasEOL ? '\n' : ' ') : ''))
      .join('')
      .replace(/[ \t]+/g, ' ')
      .trim();
    if (!text) pagesWithoutText.push(n);
    texts.push(text);
    chars += text.length;
    page.cleanup();
  }
  return { pages: pdf.numPages, title: str(info.Title), author: str(info.Author), text: texts.join('\n\n').slice(0, MAX_TEXT_CHARS), pagesWithoutText };
}

/** Page `n` as an image whose longest side is `side` px (white background). */
export async function renderPage(pdf: PdfDoc, n: number, side: number, type: 'jpeg' | 'png' = 'jpeg'): Promise<Buffer> {
  const page = await pdf.getPage(n);
  const base = page.getViewport({ scale: 1 });
  const scale = Math.min(side, MAX_RENDER_SIDE) / Math.max(base.width, base.height, 1);
  const viewport = page.getViewport({ scale });
  const canvas = createCanvas(Math.max(1, Math.ceil(viewport.width)), Math.max(1, Math.ceil(viewport.height)));
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  await page.render({ canvasContext: ctx as unknown as Parameters<typeof page.render>[0]["canvasContext"], viewport }).promise;
  page.cleanup();
  return type === 'jpeg' ? canvas.toBuffer('image/jpeg', 80) : canvas.toBuffer('image/png');
}
