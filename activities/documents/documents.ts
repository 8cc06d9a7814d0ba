/**
 * Document processing (workflow `document:<id>`): type from content, metadata, text (PDF text
 * layer, DOCX, plain text; OCR for scans and images), classification into a folder, and a JPEG
 * thumbnail of the first page at `<organization_id>/<user_id>/thumbnails/…`.
 */
import { createCanvas } from '@napi-rs/canvas';
import { Context } from '@temporalio/activity';

import { humanSize, receiptImages, THUMBNAIL_SIZE, thumbnailOf } from '../adapters/images.ts';
import { recognize } from '../adapters/ocr.ts';
import { isDocx, readDocx } from '../adapters/office.ts';
import { type PdfCaller, pdfInChild } from '../adapters/pdf.ts';
import { RASTER_IMAGE_FORMATS, sniff } from '../adapters/sniff.ts';
import { getObject, putObject } from '../adapters/storage.ts';
import { PlatformError } from '../core/errors.ts';
import { recordEvent } from '../events/index.ts';
import { type StoredUpload, uploadPaths } from '../images/index.ts';
import { type Caller, gatewayChat, visionModel } from '../llm/index.ts';
import { CATEGORIES, type Classification, classify, folderOf } from './classify.ts';
import { documentsSettings } from './settings.ts';

type DocumentKind = 'pdf' | 'image' | 'docx' | 'text' | 'markdown' | 'csv';

interface Detected {
  kind: DocumentKind;
  format: string;
  mime: string;
}

const OCR_PAGES = 3;

/** The type from the content; the name only tells Markdown and CSV from other plain text. */
function detectDocument(buf: Buffer, filename: string): Detected {
  if (!buf.length) throw new PlatformError('invalid', 'file: the uploaded file is empty', 'file');
  const s = sniff(buf);
  if (s.format === 'pdf') return { kind: 'pdf', format: 'pdf', mime: s.mime };
  if (RASTER_IMAGE_FORMATS.has(s.format)) return { kind: 'image', format: s.format, mime: s.mime };
  if (s.format === 'zip' && isDocx(buf))
    return {
      kind: 'docx',
      format: 'docx',
      mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    };
  if (s.format === 'text') {
    const name = filename.toLowerCase();
    const head = buf.subarray(0, 4096).toString('utf8');
    if (name.endsWith('.md') || name.endsWith('.markdown') || /^(#{1,6} |\* |- |```)/m.test(head))
      return { kind: 'markdown', format: 'md', mime: 'text/markdown' };
    const lines = head.split(/\r?\n/).filter(Boolean).slice(0, 5);
    const commas = lines.map((l) => (l.match(/,/g) ?? []).length);
    if (name.endsWith('.csv') || (lines.length >= 2 && commas[0] > 0 && commas.every((c) => c === commas[0])))
      return { kind: 'csv', format: 'csv', mime: 'text/csv' };
    return { kind: 'text', format: 'txt', mime: 'text/plain' };
  }
  throw new PlatformError('malformed', `Unsupported file type: ${s.mime}`, 'file');
}

/** A page-like thumbnail of text documents: a header bar and the first lines. */
function textThumbnail(text: string, title: string): Buffer {
  const w = Math.round(THUMBNAIL_SIZE * 0.773);
  const h = THUMBNAIL_SIZE;
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = '#2f4f7f';
  ctx.fillRect(0, 0, w, 18);
  ctx.fillStyle = '#ffffff';
  ctx.font = '10px sans-serif';
  ctx.fillText(title.slice(0, 32), 6, 13);
  ctx.fillStyle = '#222222';
  ctx.font = '7px sans-serif';
  text
    .split(/\r?\n/)
    .slice(0, 28)
    .forEach((line, i) => ctx.fillText(line.slice(0, 60), 6, 30 + i * 8));
  return canvas.toBuffer('image/jpeg', 80);
}

function decodeUtf8(buf: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    throw new PlatformError('invalid', 'file: the text is not valid UTF-8', 'file');
  }
}

interface DocumentMetadata {
  pages: number;
  size: string;
  size_bytes: number;
  format: string;
  mime_type: string;
  title: string | null;
  author: string | null;
  word_count: number;
  text_source: 'text_layer' | 'ocr' | 'file' | 'none';
  ocr_engine: string | null;
  dimensions?: string;
}

interface Extracted {
  metadata: DocumentMetadata;
  text: string;
  thumbnail: Buffer;
}

const words = (t: string) => t.split(/\s+/).filter(Boolean).length;

/**
 * Who the PDF reader works for: the upload's owner (one PDF of theirs read at a time), and the
 * running activity's cancellation and deadline, so a read nobody waits for any more (the activity
 * cancelled or timed out, its retry on its way) leaves the reader's queue or is killed.
 */
function pdfCaller(upload: StoredUpload): PdfCaller {
  const owner = `${upload.organization_id}/${upload.user_id}`;
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return { owner }; // outside an activity (scripts)
  }
  const { startToCloseTimeoutMs, scheduleToCloseTimeoutMs, scheduledTimestampMs } = ctx.info;
  const ends: number[] = [];
  if (startToCloseTimeoutMs > 0) ends.push(Date.now() + startToCloseTimeoutMs); // called as the attempt starts
  if (scheduleToCloseTimeoutMs > 0) ends.push(scheduledTimestampMs + scheduleToCloseTimeoutMs);
  return { owner, signal: ctx.cancellationSignal, deadline: ends.length ? Math.min(...ends) : undefined };
}

async function extract(
  body: Buffer,
  filename: string,
  d: Detected,
  who: Caller,
  reader: PdfCaller,
): Promise<Extracted> {
  const vision = visionModel(who);
  const base = { size: humanSize(body.length), size_bytes: body.length, format: d.format, mime_type: d.mime };
  if (d.kind === 'pdf') {
    // Read in the PDF child process (memory cap, time limit): see pdfInChild.
    const { info, thumbnail, ocrPages } = await pdfInChild(
      body,
      { text: true, thumbnail: THUMBNAIL_SIZE, ocr: { pages: OCR_PAGES, side: 1600 } },
      reader,
    );
    if (!info) throw new Error('PDF reader returned no text');
    let text = info.text;
    let source: DocumentMetadata['text_source'] = text.trim() ? 'text_layer' : 'none';
    let ocr_engine: string | null = null;
    if (ocrPages.length) {
      // A scan (under 5 words of text layer): read the first pages without text with OCR.
      const parts: string[] = [];
      for (const page of ocrPages) {
        const out = await recognize(page, vision);
        parts.push(out.text.trim());
        ocr_engine = out.engine;
      }
      text = parts.join('\n\n');
      source = text.trim() ? 'ocr' : 'none';
    }
    return {
      metadata: {
        ...base,
        pages: info.pages,
        title: info.title,
        author: info.author,
        word_count: words(text),
        text_source: source,
        ocr_engine,
      },
      text,
      thumbnail,
    };
  }
  if (d.kind === 'image') {
    const { info, thumbnail, page } = await receiptImages(body, {
      maxPixels: documentsSettings().MAX_IMAGE_MEGAPIXELS * 1_000_000,
    });
    const out = await recognize(page, vision);
    const text = out.text.trim();
    return {
      metadata: {
        ...base,
        pages: 1,
        title: null,
        author: null,
        word_count: words(text),
        text_source: text ? 'ocr' : 'none',
        ocr_engine: out.engine,
        dimensions: `${info.width}x${info.height}`,
      },
      text,
      thumbnail,
    };
  }
  if (d.kind === 'docx') {
    const info = readDocx(body);
    const pages = info.pages ?? Math.max(1, Math.ceil(words(info.text) / 500));
    return {
      metadata: {
        ...base,
        pages,
        title: info.title,
        author: info.author,
        word_count: words(info.text),
        text_source: info.text ? 'file' : 'none',
        ocr_engine: null,
      },
      text: info.text,
      thumbnail: textThumbnail(info.text, info.title ?? filename),
    };
  }
  const text = decodeUtf8(body);
  const lines = text.split(/\r?\n/).length;
  const title = d.kind === 'markdown' ? (/^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? null) : null;
  return {
    metadata: {
      ...base,
      pages: Math.max(1, Math.ceil(lines / 50)),
      title,
      author: null,
      word_count: words(text),
      text_source: text.trim() ? 'file' : 'none',
      ocr_engine: null,
    },
    text,
    thumbnail: textThumbnail(text, title ?? filename),
  };
}

async function classifyWithModel(upload: StoredUpload, text: string, isImage: boolean): Promise<Classification | null> {
  const out = await gatewayChat({
    organization_id: upload.organization_id,
    user_id: upload.user_id,
    agent: 'documents',
    system: `Classify a document. Reply with JSON only: {"category": one of ${JSON.stringify(CATEGORIES)}, "subcategory": a short snake_case word, "confidence": 0..1}`,
    user: `${isImage ? '(an image; its OCR text follows)\n' : ''}${text.slice(0, 6000)}`,
    max_tokens: 100,
  });
  if (!out) return null;
  const parsed = JSON.parse(out.text.replace(/^```(json)?|```$/g, '').trim());
  const category = CATEGORIES.includes(parsed.category) ? parsed.category : 'other';
  const subcategory =
    typeof parsed.subcategory === 'string' && /^[a-z_]{1,40}$/.test(parsed.subcategory)
      ? parsed.subcategory
      : 'general';
  return {
    folder_structure: { folder_name: folderOf(category), category, subcategory },
    confidence: Math.max(0, Math.min(1, Number(parsed.confidence) || 0.5)),
    engine: `llm:${out.model}`,
    evidence: [],
  };
}

export interface ProcessedDocument {
  original_path: string;
  thumbnail_path: string;
  folder_structure: Classification['folder_structure'];
  classification: { confidence: number; engine: string; evidence: string[] };
  metadata: DocumentMetadata;
  text_excerpt: string;
}

async function readUpload(upload: StoredUpload): Promise<Buffer> {
  const body = await getObject(upload.original_path);
  if (!body) throw new PlatformError('not_found', `Upload not found in storage: ${upload.original_path}`);
  return body;
}

export async function processStoredDocument(upload: StoredUpload): Promise<ProcessedDocument> {
  const reader = pdfCaller(upload);
  const body = await readUpload(upload);
  const detected = detectDocument(body, upload.filename);
  const { metadata, text, thumbnail } = await extract(
    body,
    upload.filename,
    detected,
    { organization_id: upload.organization_id, user_id: upload.user_id },
    reader,
  );
  const { thumbnail_path } = uploadPaths(upload.organization_id, upload.user_id, upload.media_id, upload.filename);
  await putObject(thumbnail_path, thumbnail, 'image/jpeg');
  const isImage = detected.kind === 'image';
  const c = (words(text) > 0 ? await classifyWithModel(upload, text, isImage) : null) ?? classify(text, isImage);
  const processed: ProcessedDocument = {
    original_path: upload.original_path,
    thumbnail_path,
    folder_structure: c.folder_structure,
    classification: { confidence: c.confidence, engine: c.engine, evidence: c.evidence },
    metadata,
    text_excerpt: text.slice(0, 500),
  };
  await publishProcessed(upload, processed);
  return processed;
}

/** The run of the workflow this activity belongs to (null outside an activity: scripts). */
function workflowRun(): { workflow_id: string; run_id: string } | null {
  let execution: { workflowId: string; runId: string } | undefined;
  try {
    execution = Context.current().info.workflowExecution;
  } catch {
    return null;
  }
  return execution ? { workflow_id: execution.workflowId, run_id: execution.runId } : null;
}

/**
 * The event `document.processed`, once the thumbnail is stored and the class known. Keyed by the
 * document and its workflow run: a retried attempt of the same run records nothing new (its
 * classification may differ from the first attempt's; the first recorded event stands), a new run
 * over the same document (the client's retry after a failed run) is a new processing. Metadata
 * only: never the document's text, title or author (they are its content), nor the name it was
 * uploaded under (a person's words: the thumbnail's path is made of ids).
 */
async function publishProcessed(upload: StoredUpload, d: ProcessedDocument): Promise<void> {
  const run = workflowRun();
  const m = d.metadata;
  await recordEvent({
    organization_id: upload.organization_id,
    type: 'document.processed',
    key: run ? `${upload.media_id}:${run.run_id}` : upload.media_id,
    data: {
      media_id: upload.media_id,
      user_id: upload.user_id,
      workflow_id: run?.workflow_id ?? null,
      folder_structure: d.folder_structure,
      classification: { confidence: d.classification.confidence, engine: d.classification.engine },
      format: m.format,
      mime_type: m.mime_type,
      pages: m.pages,
      size_bytes: m.size_bytes,
      word_count: m.word_count,
      text_source: m.text_source,
      thumbnail_path: d.thumbnail_path,
    },
  });
}

/** First page or frame as a JPEG thumbnail, stored beside the others. */
export async function thumbnailStoredFile(upload: StoredUpload): Promise<{ thumbnail_path: string; format: string }> {
  const reader = pdfCaller(upload);
  const body = await readUpload(upload);
  const d = detectDocument(body, upload.filename);
  let thumbnail: Buffer;
  if (d.kind === 'pdf')
    thumbnail = (await pdfInChild(body, { text: false, thumbnail: THUMBNAIL_SIZE }, reader)).thumbnail;
  else if (d.kind === 'image')
    thumbnail = (await thumbnailOf(body, { maxPixels: documentsSettings().MAX_IMAGE_MEGAPIXELS * 1_000_000 }))
      .thumbnail;
  else if (d.kind === 'docx') {
    const info = readDocx(body);
    thumbnail = textThumbnail(info.text, info.title ?? upload.filename);
  } else thumbnail = textThumbnail(decodeUtf8(body), upload.filename);
  const { thumbnail_path } = uploadPaths(upload.organization_id, upload.user_id, upload.media_id, upload.filename);
  await putObject(thumbnail_path, thumbnail, 'image/jpeg');
  return { thumbnail_path, format: d.format };
}
