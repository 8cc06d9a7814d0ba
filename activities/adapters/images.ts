/**
 * Image engine: sharp (libvips) for everything it decodes, heic-decode (the WASM libheif decoder
 * that heic-convert is built on) for HEVC HEIC, which sharp's prebuilt libvips cannot decode.
 * HEIC pixels are decoded once, in a worker thread, and encoded by sharp: ~1.5× faster than
 * heic-convert's JS encoder, and the event loop stays free meanwhile.
 */
import { Worker } from 'node:worker_threads';

import sharp from 'sharp';

import { PlatformError } from '../core/errors.ts';
import { RASTER_IMAGE_FORMATS, sniff, type Sniffed } from './sniff.ts';

sharp.cache(false); // thumbnails are one-shot; libvips' operation cache only costs memory here
sharp.concurrency(1); // the worker runs several activities at once on 2 cores

export const THUMBNAIL_SIZE = 256;

export interface ImageInfo {
  mime: string;
  format: string;
  width: number;
  height: number;
  size_bytes: number;
  /** EXIF orientation (1–8) when the file carries one; width/height are as displayed */
  orientation?: number;
  engine: 'sharp' | 'heic-decode+sharp';
}

export interface ImageLimits {
  maxPixels: number;
}

const unsupported = (s: Sniffed) => new PlatformError('malformed', `Unsupported file type: ${s.mime}`, 'file');
const corrupt = (why: string) => new PlatformError('invalid', `file: corrupt or unreadable image (${why})`, 'file');

function checkPixels(width: number, height: number, limits: ImageLimits): void {
  if (!width || !height) throw corrupt('no dimensions');
  if (width * height > limits.maxPixels) {
    throw new PlatformError(
      'invalid',
      `file: image is ${width}x${height} pixels, more than the ${Math.round(limits.maxPixels / 1e6)} megapixel limit`,
      'file',
    );
  }
}

const isHeif = (s: Sniffed) => s.format === 'heic' || s.format === 'heif';

interface HeifReply {
  id: number;
  width?: number;
  height?: number;
  data?: ArrayBuffer;
  error?: { kind: 'corrupt' | 'too_large'; message?: string; width?: number; height?: number };
}

/** One decoding thread, started on first use; jobs queue in order. */
class HeifDecoder {
  private worker?: Worker;
  private nextId = 1;
  private pending = new Map<number, { resolve: (r: HeifReply) => void; reject: (e: Error) => void }>();

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./heif-thread.mjs', import.meta.url));
    worker.on('message', (reply: HeifReply) => {
      const job = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (!this.pending.size) worker.unref();
      job?.resolve(reply);
    });
    const fail = (err: Error) => {
      // A crashed thread fails its jobs (the activity retries) and is replaced on next use.
      for (const job of this.pending.values()) job.reject(err);
      this.pending.clear();
      if (this.worker === worker) this.worker = undefined;
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`HEIF decoding thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  decode(buf: Buffer, maxPixels: number): Promise<HeifReply> {
    const worker = this.thread();
    const id = this.nextId++;
    const copy = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, buffer: copy, maxPixels }, [copy]);
    });
  }
}

const heif = new HeifDecoder();

/** Decodes HEIF to raw RGBA off the event loop, refusing a pixel bomb before decoding it. */
async function decodeHeif(buf: Buffer, limits: ImageLimits): Promise<{ raw: Buffer; width: number; height: number }> {
  const reply = await heif.decode(buf, limits.maxPixels);
  if (reply.error?.kind === 'too_large') checkPixels(reply.error.width!, reply.error.height!, limits);
  if (reply.error) throw corrupt(reply.error.message ?? 'unreadable');
  return { raw: Buffer.from(reply.data!), width: reply.width!, height: reply.height! };
}

/** A sharp pipeline over the image's pixels, upright (EXIF orientation applied). */
async function open(buf: Buffer, limits: ImageLimits): Promise<{ pipeline: sharp.Sharp; info: ImageInfo }> {
  if (!buf.length) throw new PlatformError('invalid', 'file: the uploaded file is empty', 'file');
  const kind = sniff(buf);
  if (!RASTER_IMAGE_FORMATS.has(kind.format)) throw unsupported(kind);
  if (isHeif(kind)) {
    const { raw, width, height } = await decodeHeif(buf, limits);
    return {
      pipeline: sharp(raw, { raw: { width, height, channels: 4 } }),
      info: {
        mime: kind.mime,
        format: kind.format,
        width,
        height,
        size_bytes: buf.length,
        engine: 'heic-decode+sharp',
      },
    };
  }
  let meta: sharp.Metadata;
  try {
    meta = await sharp(buf, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw corrupt((err as Error).message);
  }
  checkPixels(meta.width ?? 0, meta.height ?? 0, limits);
  const swap = (meta.orientation ?? 1) >= 5;
  const width = swap ? meta.height! : meta.width!;
  const height = swap ? meta.width! : meta.height!;
  return {
    pipeline: sharp(buf, { limitInputPixels: limits.maxPixels, failOn: 'truncated' }).rotate(),
    info: {
      mime: kind.mime,
      format: kind.format,
      width,
      height,
      size_bytes: buf.length,
      orientation: meta.orientation,
      engine: 'sharp',
    },
  };
}

async function render(pipeline: sharp.Sharp): Promise<Buffer> {
  try {
    return await pipeline.toBuffer();
  } catch (err) {
    const message = (err as Error).message;
    if (/pixel limit/i.test(message)) throw new PlatformError('invalid', `file: ${message}`, 'file');
    throw corrupt(message);
  }
}

/** Metadata plus a JPEG thumbnail (longest side THUMBNAIL_SIZE, never enlarged). */
export async function thumbnailOf(buf: Buffer, limits: ImageLimits): Promise<{ info: ImageInfo; thumbnail: Buffer }> {
  const { pipeline, info } = await open(buf, limits);
  const thumbnail = await render(
    pipeline
      .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: 80, mozjpeg: false }),
  );
  return { info, thumbnail };
}

/** Full-size JPEG of a HEIC/HEIF image (upright). */
export async function heicToJpeg(
  buf: Buffer,
  limits: ImageLimits,
  quality = 90,
): Promise<{ info: ImageInfo; jpeg: Buffer }> {
  if (!buf.length) throw new PlatformError('invalid', 'file: the uploaded file is empty', 'file');
  const kind = sniff(buf);
  if (!isHeif(kind))
    throw new PlatformError('malformed', `Unsupported file type: ${kind.mime} (expected HEIC/HEIF)`, 'file');
  const { pipeline, info } = await open(buf, limits);
  const jpeg = await render(pipeline.flatten({ background: '#ffffff' }).jpeg({ quality }));
  return { info, jpeg };
}

export function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = bytes;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i += 1;
  }
  return i === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[i]}`;
}

/** Longest side of the page given to OCR: enough for receipt print, small enough to stay fast. */
const OCR_MAX_SIDE = 2000;

/** A thumbnail plus an upright grayscale PNG for OCR, from one decode. */
export async function receiptImages(
  buf: Buffer,
  limits: ImageLimits,
): Promise<{ info: ImageInfo; thumbnail: Buffer; page: Buffer }> {
  const { pipeline, info } = await open(buf, limits);
  const [thumbnail, page] = await Promise.all([
    render(
      pipeline
        .clone()
        .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality: 80 }),
    ),
    render(
      pipeline
        .clone()
        .resize(OCR_MAX_SIDE, OCR_MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
        .flatten({ background: '#ffffff' })
        .grayscale()
        .png({ compressionLevel: 1 }),
    ),
  ]);
  return { info, thumbnail, page };
}
