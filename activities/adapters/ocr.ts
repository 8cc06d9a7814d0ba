/**
 * Text from an image. Default: tesseract.js with its packaged English model
 * (@tesseract.js-data/eng), fully offline, one worker thread kept warm and reused across calls
 * (jobs queue for it). With OCR_ENGINE=openai an OpenAI-compatible vision model transcribes
 * instead (OPENAI_BASE_URL, OPENAI_API_KEY, OCR_MODEL). Every result names its engine.
 */
import { createRequire } from 'node:module';

import OpenAI from 'openai';
import { createWorker, PSM, type Worker } from 'tesseract.js';

import { misconfigured } from '../core/errors.ts';
import { ocrSettings } from './settings.ts';

/**
 * A vision model the caller routes through (the organization's metered LLM model): null means the
 * model failed or is not configured, and the local engine reads the image instead.
 */
export interface VisionModel {
  read(image: Buffer, instructions: string): Promise<{ value: string; model: string } | null>;
}

export interface OcrResult {
  text: string;
  /** 0..1; the model's own estimate for tesseract, null when the engine gives none */
  confidence: number | null;
  engine: string;
  ms: number;
}

const require = createRequire(import.meta.url);
const eng = require('@tesseract.js-data/eng') as { langPath: string; gzip: boolean };

let worker: Promise<Worker> | undefined;
let queue: Promise<unknown> = Promise.resolve();

function tesseract(): Promise<Worker> {
  worker ??= (async () => {
    const w = await createWorker('eng', 1, { langPath: eng.langPath, gzip: eng.gzip, cacheMethod: 'none' });
    // Receipts are one block of lines; the default automatic segmentation loses the price column.
    await w.setParameters({ tessedit_pageseg_mode: PSM.SINGLE_BLOCK, preserve_interword_spaces: '1' });
    return w;
  })().catch((err) => {
    worker = undefined;
    throw err;
  });
  return worker;
}

async function withTesseract(image: Buffer): Promise<OcrResult> {
  const started = performance.now();
  const run = queue.then(async () => {
    const w = await tesseract();
    return w.recognize(image);
  });
  queue = run.catch(() => undefined);
  const { data } = await run;
  return {
    text: data.text,
    confidence: data.confidence / 100,
    engine: 'tesseract.js',
    ms: Math.round(performance.now() - started),
  };
}

async function withVisionModel(image: Buffer): Promise<OcrResult> {
  const cfg = ocrSettings();
  if (!cfg.OPENAI_API_KEY && !cfg.OPENAI_BASE_URL)
    throw misconfigured('OCR_ENGINE=openai needs OPENAI_BASE_URL and/or OPENAI_API_KEY');
  const started = performance.now();
  const client = new OpenAI({
    apiKey: cfg.OPENAI_API_KEY ?? 'not-needed',
    baseURL: cfg.OPENAI_BASE_URL,
    timeout: 60_000,
    maxRetries: 2,
  });
  const res = await client.chat.completions.create({
    model: cfg.OCR_MODEL,
    temperature: 0,
    messages: [
      { role: 'system', content: VISION_INSTRUCTIONS },
      {
        role: 'user',
        content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}` } }],
      },
    ],
  });
  return {
    text: res.choices[0]?.message?.content ?? '',
    confidence: null,
    engine: `openai:${cfg.OCR_MODEL}`,
    ms: Math.round(performance.now() - started),
  };
}

const VISION_INSTRUCTIONS =
  'You transcribe receipts and documents. Answer with the text of the image only, line by line, keeping each item and its price on one line. No commentary.';

/**
 * `image`: an upright page (PNG or JPEG), e.g. from receiptImages(). With a caller's vision model
 * (its organization's ticket_scan agent through the LLM gateway, metered) that model reads the
 * page, tesseract when it answers nothing; without one (tools, tests) OCR_ENGINE decides.
 */
export async function recognize(image: Buffer, vision?: VisionModel): Promise<OcrResult> {
  if (vision) {
    const started = performance.now();
    const out = await vision.read(image, VISION_INSTRUCTIONS);
    if (out)
      return {
        text: out.value,
        confidence: null,
        engine: `llm:${out.model}`,
        ms: Math.round(performance.now() - started),
      };
    return withTesseract(image);
  }
  return ocrSettings().OCR_ENGINE === 'openai' ? withVisionModel(image) : withTesseract(image);
}

export async function stopOcr(): Promise<void> {
  const w = worker;
  worker = undefined;
  if (w) await (await w.catch(() => undefined))?.terminate();
}
