/**
 * Each vendor adapter's slice of the configuration (docs/configuration.md), one per adapter: read
 * at call time, so a changed configuration applies at once.
 */
import { slice } from '../core/config.ts';

/** mail.ts: SMTP, else files in DATA_DIR/outbox; the default sender. */
export const mailSettings = slice(['SMTP_URL', 'EMAIL_FROM', 'dataDir'] as const);

/** ocr.ts: the engine, and the vision model's endpoint. */
export const ocrSettings = slice(['OCR_ENGINE', 'OCR_MODEL', 'OPENAI_BASE_URL', 'OPENAI_API_KEY'] as const);

/** payments.ts: Stripe's key, its webhook secret, and the test mode. */
export const paymentsSettings = slice(['STRIPE_SECRET_KEY', 'PAYMENT_WEBHOOK_SECRET', 'PAYMENTS_TEST_MODE'] as const);

/** pdf.ts: the readers, the queue, and the image size a reader's memory derives from. */
export const pdfSettings = slice(['PDF_READERS', 'PDF_QUEUE_MAX', 'MAX_IMAGE_MEGAPIXELS'] as const);

/** places.ts: the provider, its key and endpoint, and how long an answer is kept. */
export const placesSettings = slice([
  'PLACES_PROVIDER',
  'PLACES_API_KEY',
  'PLACES_BASE_URL',
  'PLACES_CACHE_HOURS',
] as const);

/** speech.ts: the engine, its model and endpoint, the longest audio, and where ffmpeg and pocketsphinx are. */
export const speechSettings = slice([
  'SPEECH_ENGINE',
  'SPEECH_MODEL',
  'OPENAI_BASE_URL',
  'OPENAI_API_KEY',
  'MAX_AUDIO_SECONDS',
  'FFMPEG_PATH',
  'PLATFORM_BIN_DIR',
] as const);

/** webhooks.ts: whether a webhook may target a private address. */
export const webhooksSettings = slice(['WEBHOOK_ALLOW_PRIVATE'] as const);
