/**
 * PDF reading with pdfjs-dist (legacy build, Node 20): page count, title/author, the text layer
 * of the first pages, and pages rendered to JPEG with @napi-rs/canvas. Encrypted and corrupt files
 * are the client's problem (422); page and text caps keep a 500-page PDF cheap. The platform reads
 * PDFs through pdfInChild: a child process with a memory cap and a time limit (decompression bombs).
 */
import { createCanvas } from '@napi-rs/canvas';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';
import { config } from '../config';
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
    // maxImageSize: an embedded image over MAX_IMAGE_MEGAPIXELS is left out of the page (pdfjs
    // warns and draws the rest) instead of being inflated in full: a 400 KB PDF can hold a
    // 20,000 × 20,000 image of zeros, ~5 GB and 20 s of this process (pdfjs runs in-thread here).
    const maxImageSize = Math.floor(config().MAX_IMAGE_MEGAPIXELS * 1_000_000);
    return await pdfjs.getDocument({ data: new Uint8Array(buf), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, stopAtErrors: false, maxImageSize }).promise;
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

export interface PdfJob {
  /** read metadata and text (readPdf) */
  text: boolean;
  /** longest side of the first page's JPEG */
  thumbnail: number;
  /** when the text layer has under 5 words: pages without text rendered as PNGs for OCR */
  ocr?: { pages: number; side: number };
}

export interface PdfJobResult {
  info: PdfInfo | null;
  thumbnail: Buffer;
  ocrPages: Buffer[];
}

const words = (t: string) => t.split(/\s+/).filter(Boolean).length;

/** The whole reading of one PDF, in this process (the child runs this). */
export async function runPdfJob(buf: Buffer, job: PdfJob): Promise<PdfJobResult> {
  return withPdf(buf, async (pdf) => {
    const info = job.text ? await readPdf(pdf) : null;
    const thumbnail = await renderPage(pdf, 1, job.thumbnail);
    const ocrPages: Buffer[] = [];
    if (info && job.ocr && words(info.text) < 5) {
      for (const n of info.pagesWithoutText.slice(0, job.ocr.pages)) ocrPages.push(await renderPage(pdf, n, job.ocr.side, 'png'));
    }
    return { info, thumbnail, ocrPages };
  });
}

/** A job gets this long in the child before the child is killed and the file refused. */
export const PDF_JOB_TIMEOUT_MS = 60_000;

/** An idle child exits after this long. */
const PDF_CHILD_IDLE_MS = 60_000;

/** How often the child's resident memory is checked while it works on a job. */
const MEMORY_POLL_MS = 25;

/**
 * The child's memory cap (resident set): room for Node, pdfjs and the canvas (~300 MB at rest),
 * plus ~16 bytes per pixel of the largest image allowed (pdfjs holds the decoded bytes, an RGBA
 * copy, and the canvas its own). An image within MAX_IMAGE_MEGAPIXELS fits; whatever needs more
 * (a soft mask or content stream that inflates to gigabytes) gets the child killed.
 */
export function pdfChildMemoryBytes(): number {
  return 512 * 2 ** 20 + 16 * config().MAX_IMAGE_MEGAPIXELS * 1_000_000;
}

/**
 * The hard stop behind the watchdog (ulimit -d, address space that may be written), for when
 * this process is too busy to poll: @napi-rs/canvas reserves ~1 GB of it at load, untouched.
 */
const childDataLimitBytes = () => 2 ** 30 + 2 * pdfChildMemoryBytes();

function residentBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null; // no /proc (not Linux) or the child is gone: the data limit still holds
  }
}

interface Pending {
  id: number;
  pdf: Buffer;
  job: PdfJob;
  resolve: (r: PdfJobResult) => void;
  reject: (e: Error) => void;
}

type Reply = { id: number; result?: PdfJobResult; error?: { status?: number; message: string; field?: string } } | { ready: true };

const u8 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/**
 * One child process reads PDFs for this worker, one job at a time (pdfjs ran on the worker's own
 * thread before, so this costs no throughput and frees the event loop); it starts on demand and
 * exits when idle. A job that kills the child (memory cap) or outlasts PDF_JOB_TIMEOUT_MS is
 * refused with 422; the next job gets a fresh child.
 */
class PdfReader {
  private child?: ChildProcess;
  /** the child has loaded pdfjs and listens for jobs */
  private ready = false;
  private queue: Pending[] = [];
  private current?: Pending;
  private timer?: NodeJS.Timeout;
  private watchdog?: NodeJS.Timeout;
  /** why this process killed the child, if it did */
  private killedFor?: string;
  private idle?: NodeJS.Timeout;
  private nextId = 1;

  read(pdf: Buffer, job: PdfJob): Promise<PdfJobResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, pdf, job, resolve, reject });
      this.pump();
    });
  }

  private spawnChild(): ChildProcess {
    const script = fileURLToPath(new URL('./pdf-child.mjs', import.meta.url));
    const kb = Math.ceil(childDataLimitBytes() / 1024);
    // sh sets the limit, then becomes node: the limit applies to the child only.
    const child = spawn('/bin/sh', ['-c', `ulimit -d ${kb} && exec "$0" "$@"`, process.execPath, script], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    this.ready = false;
    child.on('message', (reply: Reply) => {
      if (this.child !== child) return;
      if ('ready' in reply) {
        this.ready = true;
        this.pump();
        return;
      }
      const job = this.current;
      if (!job || job.id !== reply.id) return;
      this.finish();
      if (reply.result) job.resolve({ info: reply.result.info, thumbnail: u8(reply.result.thumbnail), ocrPages: reply.result.ocrPages.map(u8) });
      else if (reply.error?.status) job.reject(new PlatformError(reply.error.status, reply.error.message, reply.error.field));
      else job.reject(new Error(reply.error?.message ?? 'PDF reader failed'));
      this.pump();
    });
    const gone = (why: string, err?: Error) => {
      if (this.child !== child) return;
      this.child = undefined;
      const job = this.current;
      const killedFor = this.killedFor;
      this.finish();
      if (job) {
        // It died on this file: the file's fault (memory cap, time limit), unless it was never up.
        job.reject(err ?? new PlatformError(422, `file: the PDF could not be read within the limits (${killedFor ?? `the reader died, ${why}, most likely at its memory limit`}): something in it, e.g. an image or mask far over ${config().MAX_IMAGE_MEGAPIXELS} megapixels, needs more memory or time than allowed`, 'file'));
        this.pump();
      } else {
        // It never started (or died idle): the worker's trouble, not a file's; the activities
        // retry, and the next read starts a new child (no respawn loop here).
        for (const waiting of this.queue.splice(0)) waiting.reject(err ?? new Error(`PDF reader process stopped before reading (${why})`));
      }
    };
    child.on('exit', (code, signal) => gone(signal ?? `exit code ${code}`));
    child.on('error', (err) => gone(err.message, err));
    return child;
  }

  private finish(): void {
    clearTimeout(this.timer);
    clearInterval(this.watchdog);
    this.current = undefined;
    this.killedFor = undefined;
  }

  private kill(child: ChildProcess, why: string): void {
    this.killedFor ??= why;
    child.kill('SIGKILL');
  }

  private pump(): void {
    if (this.current) return;
    if (!this.queue.length) {
      // idle: the child must not keep the worker process alive at shutdown, nor hold its
      // ~250 MB for long (a new one starts in ~1 s)
      const child = this.child;
      child?.unref();
      child?.channel?.unref();
      clearTimeout(this.idle);
      if (child) {
        this.idle = setTimeout(() => {
          if (this.child !== child || this.current) return;
          this.child = undefined; // forgotten first: its exit is not a job's failure
          child.kill('SIGTERM');
        }, PDF_CHILD_IDLE_MS);
        this.idle.unref();
      }
      return;
    }
    clearTimeout(this.idle);
    this.child ??= this.spawnChild();
    const child = this.child;
    child.ref();
    child.channel?.ref();
    if (!this.ready) return; // pumped again on its ready message
    const next = this.queue.shift()!;
    this.current = next;
    this.timer = setTimeout(() => this.kill(child, `over ${PDF_JOB_TIMEOUT_MS / 1000} s`), PDF_JOB_TIMEOUT_MS);
    const cap = pdfChildMemoryBytes();
    this.watchdog = setInterval(() => {
      const rss = child.pid ? residentBytes(child.pid) : null;
      if (rss !== null && rss > cap) this.kill(child, `over ${Math.round(cap / 2 ** 20)} MB of memory`);
    }, MEMORY_POLL_MS);
    child.send({ id: next.id, pdf: next.pdf, job: next.job });
  }
}

const reader = new PdfReader();

/** runPdfJob in the PDF child process, under its memory cap and time limit. */
export function pdfInChild(pdf: Buffer, job: PdfJob): Promise<PdfJobResult> {
  return reader.read(pdf, job);
}
