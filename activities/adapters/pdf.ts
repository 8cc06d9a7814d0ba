/**
 * PDF reading with pdfjs-dist (legacy build, Node 20): page count, title/author, the text layer
 * of the first pages, and pages rendered to JPEG with @napi-rs/canvas. Encrypted and corrupt files
 * are the client's problem (422); page and text caps keep a 500-page PDF cheap. The platform reads
 * PDFs through pdfInChild: a child process with a memory cap and a time limit (decompression bombs).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { createCanvas } from '@napi-rs/canvas';
import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';

import { type ErrorKind, PlatformError } from '../core/errors.ts';
import { pdfSettings } from './settings.ts';

const MAX_TEXT_PAGES = 50;
const MAX_TEXT_CHARS = 200_000;
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
    const maxImageSize = Math.floor(pdfSettings().MAX_IMAGE_MEGAPIXELS * 1_000_000);
    return await pdfjs.getDocument({
      data: new Uint8Array(buf),
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
      stopAtErrors: false,
      maxImageSize,
    }).promise;
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'PasswordException')
      throw new PlatformError('invalid', 'file: the PDF is encrypted (password protected)', 'file');
    throw new PlatformError('invalid', `file: corrupt or unreadable PDF (${(err as Error).message})`, 'file');
  }
}

const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);

export async function withPdf<T>(buf: Buffer, work: (pdf: PdfDoc) => Promise<T>): Promise<T> {
  const pdf = await open(buf);
  try {
    return await work(pdf);
  } catch (err) {
    if (err instanceof PlatformError) throw err;
    throw new PlatformError('invalid', `file: corrupt or unreadable PDF (${(err as Error).message})`, 'file');
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
  return {
    pages: pdf.numPages,
    title: str(info.Title),
    author: str(info.Author),
    text: texts.join('\n\n').slice(0, MAX_TEXT_CHARS),
    pagesWithoutText,
  };
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
  await page.render({ canvasContext: ctx as unknown as Parameters<typeof page.render>[0]['canvasContext'], viewport })
    .promise;
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

/**
 * The whole reading of one PDF, in this process: the child runs it (pdf-child.mjs, through importBeside).
 * @public
 */
export async function runPdfJob(buf: Buffer, job: PdfJob): Promise<PdfJobResult> {
  return withPdf(buf, async (pdf) => {
    const info = job.text ? await readPdf(pdf) : null;
    const thumbnail = await renderPage(pdf, 1, job.thumbnail);
    const ocrPages: Buffer[] = [];
    if (info && job.ocr && words(info.text) < 5) {
      for (const n of info.pagesWithoutText.slice(0, job.ocr.pages))
        ocrPages.push(await renderPage(pdf, n, job.ocr.side, 'png'));
    }
    return { info, thumbnail, ocrPages };
  });
}

/** A job gets this long in the child before the child is killed and the file refused. */
const PDF_JOB_TIMEOUT_MS = 60_000;

/** An idle child exits after this long. */
const PDF_CHILD_IDLE_MS = 60_000;

/** How often the child's resident memory is checked while it works on a job. */
const MEMORY_POLL_MS = 25;

/**
 * The child's working room (resident set above its own size once ready, which is ~80 MB compiled
 * and ~215 MB under tsx's loader): 256 MB for pdfjs's state and the canvas, plus ~16 bytes per
 * pixel of the largest image allowed (pdfjs holds the decoded bytes, an RGBA copy, and the canvas
 * its own). An image within MAX_IMAGE_MEGAPIXELS fits; whatever needs more (a soft mask or content
 * stream that inflates to gigabytes) gets the child killed. Measured from the child's size at ready,
 * the limit is the same whether the platform runs compiled or from the sources.
 */
function pdfChildMemoryBytes(): number {
  return 256 * 2 ** 20 + 16 * pdfSettings().MAX_IMAGE_MEGAPIXELS * 1_000_000;
}

/** The child's size at ready when /proc cannot say (not Linux): the watchdog is off there anyway. */
const CHILD_AT_READY_BYTES = 256 * 2 ** 20;

/**
 * The hard stop behind the watchdog (ulimit -d, address space that may be written), for when
 * this process is too busy to poll: @napi-rs/canvas reserves ~1 GB of it at load, untouched.
 */
const childDataLimitBytes = () => 2 ** 30 + 2 * (512 * 2 ** 20 + 16 * pdfSettings().MAX_IMAGE_MEGAPIXELS * 1_000_000);

function residentBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null; // no /proc (not Linux) or the child is gone: the data limit still holds
  }
}

/** Who wants a PDF read, and for how long. */
export interface PdfCaller {
  /** whose PDF it is (`<organization_id>/<user_id>`): one owner's PDFs are read one at a time */
  owner: string;
  /** aborted when the caller gives up (its activity is cancelled or times out) */
  signal?: AbortSignal;
  /** epoch ms after which nobody waits for the answer (its activity's deadline) */
  deadline?: number;
}

/** PDFs of one owner in the reader at once, read or waiting; another is refused (503). */
const PDF_JOBS_PER_OWNER = 2;

/** What a busy answer asks the client to wait before sending the PDF again. */
const BUSY_RETRY_AFTER_S = 5;

const busy = (why: string) =>
  new PlatformError(
    'busy',
    `The PDF reader is busy (${why}); send the PDF again in ${BUSY_RETRY_AFTER_S} s`,
    undefined,
    { 'Retry-After': String(BUSY_RETRY_AFTER_S) },
  );

interface Pending {
  id: number;
  owner: string;
  pdf: Buffer | undefined;
  job: PdfJob;
  /** resolved or rejected: nothing more happens to it */
  done: boolean;
  resolve: (r: PdfJobResult) => void;
  reject: (e: Error) => void;
}

type Reply =
  | { id: number; result?: PdfJobResult; error?: { kind?: ErrorKind; message: string; field?: string } }
  | { ready: true };

const u8 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** One child process and the job it holds. */
interface Reader {
  child: ChildProcess;
  /** the child has loaded pdfjs and listens for jobs */
  ready: boolean;
  /** its resident size when it said ready: the memory cap is counted from there */
  sizeAtReady?: number;
  /** its job: sent once the child is ready */
  current?: Pending;
  timer?: NodeJS.Timeout;
  watchdog?: NodeJS.Timeout;
  /** why this process killed the child, if it did */
  killedFor?: string;
  idle?: NodeJS.Timeout;
}

/**
 * Up to PDF_READERS child processes read PDFs for this worker, one job each (pdfjs ran on the
 * worker's own thread before, so this frees the event loop); they start on demand and exit when
 * idle. A job that kills its child (memory cap) or outlasts PDF_JOB_TIMEOUT_MS is refused with
 * 422; the next job gets a fresh child.
 *
 * No queue one user can block: an owner's PDFs are read one at a time (a user's bombs hold one
 * child at most, the others read everyone else's), an owner has at most PDF_JOBS_PER_OWNER in
 * here and at most PDF_QUEUE_MAX wait in all (each holds its file in memory); past either the
 * PDF is 503 with Retry-After. A job whose caller gave up (activity cancelled, deadline passed)
 * leaves the queue, or has its child killed if it is being read: a timed-out activity's retry
 * does not find its previous attempt still queued or running.
 */
class PdfReader {
  private readers = new Set<Reader>();
  private queue: Pending[] = [];
  private nextId = 1;

  read(pdf: Buffer, job: PdfJob, caller: PdfCaller): Promise<PdfJobResult> {
    return new Promise<PdfJobResult>((resolve, reject) => {
      const { owner, signal, deadline } = caller;
      if (signal?.aborted) return reject(abortReason(signal));
      const left = deadline === undefined ? Infinity : deadline - Date.now();
      if (left <= 0) return reject(deadlineError());
      const mine =
        this.queue.filter((p) => p.owner === owner).length +
        [...this.readers].filter((r) => r.current?.owner === owner).length;
      if (mine >= PDF_JOBS_PER_OWNER) return reject(busy(`${mine} PDFs of this user are being read or waiting`));
      let deadlineTimer: NodeJS.Timeout | undefined;
      const onAbort = () => this.abandon(pending, abortReason(signal!));
      const settle = () => {
        pending.done = true;
        pending.pdf = undefined; // not held here past its job
        clearTimeout(deadlineTimer);
        signal?.removeEventListener('abort', onAbort);
      };
      const pending: Pending = {
        id: this.nextId++,
        owner,
        pdf,
        job,
        done: false,
        resolve: (r) => (settle(), resolve(r)),
        reject: (e) => (settle(), reject(e)),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // (a deadline past setTimeout's ~24 days is left to the signal)
      if (left < 2 ** 31 - 1) deadlineTimer = setTimeout(() => this.abandon(pending, deadlineError()), left);
      this.queue.push(pending);
      this.pump();
      // Still waiting (every child busy, or its owner's PDF is being read): bounded.
      if (this.queue.length > pdfSettings().PDF_QUEUE_MAX && this.queue.includes(pending)) {
        this.queue.splice(this.queue.indexOf(pending), 1);
        pending.reject(busy(`${this.queue.length} PDFs are waiting`));
      }
    });
  }

  /** The caller gave up: out of the queue, or its child killed if it is being read. */
  private abandon(job: Pending, why: Error): void {
    if (job.done) return;
    const at = this.queue.indexOf(job);
    if (at >= 0) {
      this.queue.splice(at, 1);
      job.reject(why);
      return;
    }
    const reader = [...this.readers].find((r) => r.current === job);
    if (!reader) return;
    if (reader.ready) {
      // forgotten first: its exit is not this job's failure, nor a file's
      this.readers.delete(reader);
      this.stop(reader);
      reader.child.kill('SIGKILL');
    } else {
      reader.current = undefined; // not sent yet: the starting child takes the next job
    }
    job.reject(why);
    this.pump();
  }

  private spawnReader(): Reader {
    const script = fileURLToPath(new URL('./pdf-child.mjs', import.meta.url));
    const kb = Math.ceil(childDataLimitBytes() / 1024);
    // sh sets the limit, then becomes node: the limit applies to the child only.
    const child = spawn('/bin/sh', ['-c', `ulimit -d ${kb} && exec "$0" "$@"`, process.execPath, script], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    const reader: Reader = { child, ready: false };
    this.readers.add(reader);
    child.on('message', (reply: Reply) => {
      if (!this.readers.has(reader)) return;
      if ('ready' in reply) {
        reader.ready = true;
        reader.sizeAtReady = (child.pid ? residentBytes(child.pid) : null) ?? CHILD_AT_READY_BYTES;
        if (reader.current) this.send(reader, reader.current);
        else this.pump();
        return;
      }
      const job = reader.current;
      if (!job || job.id !== reply.id) return;
      this.stop(reader);
      if (reply.result)
        job.resolve({
          info: reply.result.info,
          thumbnail: u8(reply.result.thumbnail),
          ocrPages: reply.result.ocrPages.map(u8),
        });
      else if (reply.error?.kind)
        job.reject(new PlatformError(reply.error.kind, reply.error.message, reply.error.field));
      else job.reject(new Error(reply.error?.message ?? 'PDF reader failed'));
      this.pump();
    });
    const gone = (why: string, err?: Error) => {
      if (!this.readers.has(reader)) return;
      this.readers.delete(reader);
      const job = reader.current;
      const { killedFor, ready } = reader;
      this.stop(reader);
      if (job && ready) {
        // It died on this file: the file's fault (memory cap, time limit).
        job.reject(
          err ??
            new PlatformError(
              'invalid',
              `file: the PDF could not be read within the limits (${killedFor ?? `the reader died, ${why}, most likely at its memory limit`}): something in it, e.g. an image or mask far over ${pdfSettings().MAX_IMAGE_MEGAPIXELS} megapixels, needs more memory or time than allowed`,
              'file',
            ),
        );
        this.pump();
      } else if (!ready) {
        // It never started: the worker's trouble, not a file's; the activities retry, and the
        // next read starts a new child (no respawn loop here).
        const failed = new Error(`PDF reader process stopped before reading (${why})`);
        job?.reject(err ?? failed);
        for (const waiting of this.queue.splice(0)) waiting.reject(err ?? failed);
      }
      // died idle: nothing lost, the next read starts a new child
    };
    child.on('exit', (code, signal) => gone(signal ?? `exit code ${code}`));
    child.on('error', (err) => gone(err.message, err));
    return reader;
  }

  /** Sends the job to the ready child, under the time limit and the memory watchdog. */
  private send(reader: Reader, job: Pending): void {
    const { child } = reader;
    reader.timer = setTimeout(() => this.kill(reader, `over ${PDF_JOB_TIMEOUT_MS / 1000} s`), PDF_JOB_TIMEOUT_MS);
    const cap = (reader.sizeAtReady ?? CHILD_AT_READY_BYTES) + pdfChildMemoryBytes();
    reader.watchdog = setInterval(() => {
      const rss = child.pid ? residentBytes(child.pid) : null;
      if (rss !== null && rss > cap) this.kill(reader, `over ${Math.round(cap / 2 ** 20)} MB of memory`);
    }, MEMORY_POLL_MS);
    child.send({ id: job.id, pdf: job.pdf, job: job.job });
  }

  /** The reader holds no job any more. */
  private stop(reader: Reader): void {
    clearTimeout(reader.timer);
    clearInterval(reader.watchdog);
    reader.current = undefined;
    reader.killedFor = undefined;
  }

  private kill(reader: Reader, why: string): void {
    reader.killedFor ??= why;
    reader.child.kill('SIGKILL');
  }

  /** Gives waiting jobs to free children (starting one if there is room), oldest first, one per owner. */
  private pump(): void {
    const reading = new Set([...this.readers].flatMap((r) => (r.current ? [r.current.owner] : [])));
    for (let i = 0; i < this.queue.length;) {
      const next = this.queue[i];
      if (reading.has(next.owner)) {
        i += 1; // its owner's other PDF is being read: the next owner's goes first
        continue;
      }
      let reader = [...this.readers].find((r) => !r.current && r.ready);
      if (!reader && this.readers.size < pdfSettings().PDF_READERS) reader = this.spawnReader();
      if (!reader) break;
      this.queue.splice(i, 1);
      reading.add(next.owner);
      clearTimeout(reader.idle);
      reader.idle = undefined;
      reader.current = next;
      reader.child.ref();
      reader.child.channel?.ref();
      if (reader.ready) this.send(reader, next); // else sent on its ready message
    }
    for (const reader of this.readers) {
      if (reader.current || !reader.ready || reader.idle) continue;
      // idle: the child must not keep the worker process alive at shutdown, nor hold its
      // ~300 MB for long (a new one starts in ~1 s)
      reader.child.unref();
      reader.child.channel?.unref();
      reader.idle = setTimeout(() => {
        if (reader.current || !this.readers.has(reader)) return;
        this.readers.delete(reader); // forgotten first: its exit is not a job's failure
        reader.child.kill('SIGTERM');
      }, PDF_CHILD_IDLE_MS);
      reader.idle.unref();
    }
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('PDF read cancelled: its caller gave up');
}

/** Not the file's fault (no 4xx): the activity that asked has timed out and its answer is unused. */
const deadlineError = () => new Error("PDF read dropped: its activity's deadline passed");

const reader = new PdfReader();

/**
 * runPdfJob in a PDF child process, under its memory cap and time limit, as `caller.owner`'s
 * turn comes; dropped (or its child killed) when `caller.signal` aborts or `caller.deadline`
 * passes; 503 with Retry-After when the reader is full (see PdfReader).
 */
export function pdfInChild(pdf: Buffer, job: PdfJob, caller: PdfCaller): Promise<PdfJobResult> {
  return reader.read(pdf, job, caller);
}
