import path from 'node:path';

import { z } from 'zod';

/**
 * Configuration is read once, validated with zod, at process start (the variables and their
 * defaults: docs/configuration.md). Every process (edge, worker, supervisor, tests) goes
 * through loadConfig so defaults agree.
 */
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const port = z.coerce.number().int().min(1).max(65535);
const optional = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const envSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: port.default(8000),
  DATA_DIR: z.string().default('./data'),
  TEMPORAL_ADDRESS: optional,
  LOCAL_TEMPORAL_PORT: port.default(7233),
  LOCAL_TEMPORAL_UI_PORT: port.default(8233),
  LOCAL_MONGODB_PORT: port.default(27017),
  LOCAL_MINIO_PORT: port.default(9000),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  // Days the local Temporal dev server keeps ended runs, their inputs included (docs/privacy.md).
  TEMPORAL_RETENTION_DAYS: z.coerce.number().int().min(1).max(30).default(3),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('platform'),
  MONGODB_URI: optional,
  MINIO_ENDPOINT: optional,
  MINIO_ACCESS_KEY: optional,
  MINIO_SECRET_KEY: optional,
  MINIO_BUCKET: z.string().min(3).default('platform'),
  MINIO_USE_SSL: bool.default(false),
  PLATFORM_ADMIN_KEY: optional,
  DEFAULT_ORGANIZATION_ID: z.string().min(1).default('default'),
  PAYMENT_WEBHOOK_SECRET: optional,
  STRIPE_SECRET_KEY: optional,
  // Without STRIPE_SECRET_KEY purchases are refused (503) unless this says Stripe's test payment
  // methods may buy tokens for free (development and the test suite only).
  PAYMENTS_TEST_MODE: bool.default(false),
  GIFT_PROVIDER: z.enum(['sandbox', 'reloadly']).default('sandbox'),
  GIFT_PROVIDER_URL: optional,
  GIFT_PROVIDER_AUTH_URL: optional,
  GIFT_PROVIDER_CLIENT_ID: optional,
  GIFT_PROVIDER_CLIENT_SECRET: optional,
  // When a redemption's outcome is unknown and it goes to an admin (needs_review) instead of being
  // refunded: an order still PROCESSING after this many seconds, or an order / status check that
  // failed this many attempts.
  GIFT_PROCESSING_LIMIT_SECONDS: z.coerce.number().int().min(1).default(86_400),
  GIFT_PROVIDER_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(20),
  // How long an edge trusts a Reloadly balance it read before checking a redemption against it.
  GIFT_BALANCE_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  CONFIG_ENCRYPTION_KEY: optional,
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(0).default(30),
  // How many proxies in front of the edge append to X-Forwarded-For; 0: the header is ignored.
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  MAX_KEYS_PER_USER: z.coerce.number().int().min(1).default(10),
  // Scheduler load (docs/components/scheduler.md, Limits): stored events per owner and per organization (409
  // beyond), and what a basic key's event may ask of the Schedules.
  SCHEDULER_MAX_EVENTS_PER_USER: z.coerce.number().int().min(1).default(100),
  SCHEDULER_MAX_EVENTS_PER_ORGANIZATION: z.coerce.number().int().min(1).default(10_000),
  // Events a user may store, ended ones included (freed only by a delete): ended events and their Schedules stay bounded.
  SCHEDULER_MAX_STORED_EVENTS_PER_USER: z.coerce.number().int().min(1).default(1000),
  SCHEDULER_MIN_INTERVAL_SECONDS_BASIC: z.coerce.number().int().min(0).max(86_400).default(3600),
  // Not below the default window (60): a basic event that names none gets the default.
  SCHEDULER_MAX_CATCHUP_MINUTES_BASIC: z.coerce.number().int().min(60).max(10_080).default(60),
  MAX_UPLOAD_MB: z.coerce.number().positive().default(25),
  MAX_IMAGE_MEGAPIXELS: z.coerce.number().positive().default(100),
  // The worker's PDF reader (activities/adapters/pdf.ts): child processes reading PDFs at once (one
  // per user at a time), and PDFs that may wait for one; past that a PDF is 503 with Retry-After.
  PDF_READERS: z.coerce.number().int().min(1).max(8).default(2),
  PDF_QUEUE_MAX: z.coerce.number().int().min(0).max(100).default(4),
  SMTP_URL: optional,
  EMAIL_FROM: z.string().default('Platform <no-reply@localhost>'),
  EMAIL_USER_LIMIT_PER_HOUR: z.coerce.number().int().min(0).default(20),
  // Mail written to DATA_DIR/outbox (no SMTP_URL) holds recipients and bodies: removed after this
  // many days by the hourly retention run (docs/components/email.md).
  OUTBOX_RETENTION_DAYS: z.coerce.number().positive().max(3650).default(7),
  OPENAI_BASE_URL: optional,
  OPENAI_API_KEY: optional,
  PLATFORM_BIN_DIR: optional,
  PUBLIC_URL: optional,
  RESPONSE_RETENTION_DAYS: z.coerce.number().min(0).default(90),
  // Audit records (docs/components/audit.md) are kept this many days, then removed by the hourly retention run.
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(400),
  // A user's data exports (docs/privacy.md): how long a ready zip can be downloaded, and how many
  // exports a user may ask for in 24 hours.
  USER_EXPORT_TTL_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 90)
    .default(168),
  USER_EXPORTS_PER_DAY: z.coerce.number().int().min(1).max(1000).default(5),
  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  // Outgoing events (docs/components/events.md): the first retry's delay (each next one is 4 times
  // longer, at most 12 hours, with jitter), how long retries go on, and how long an endpoint may
  // fail without a success before it is disabled.
  WEBHOOK_RETRY_BASE_SECONDS: z.coerce.number().positive().max(3600).default(5),
  WEBHOOK_RETRY_HOURS: z.coerce.number().positive().max(720).default(72),
  WEBHOOK_DISABLE_AFTER_DAYS: z.coerce.number().positive().max(365).default(5),
  SCAN_CONFIDENCE_THRESHOLD: z.coerce.number().min(0).max(1).default(0.8),
  SCAN_VALIDATION_DEADLINE_HOURS: z.coerce.number().positive().default(168),
  OCR_ENGINE: z.enum(['tesseract', 'openai']).default('tesseract'),
  OCR_MODEL: z.string().min(1).default('gpt-4o-mini'),
  PLACES_PROVIDER: z.enum(['none', 'google', 'osm']).default('none'),
  PLACES_API_KEY: optional,
  PLACES_BASE_URL: optional,
  PLACES_CACHE_HOURS: z.coerce.number().min(0).default(24),
  NEARBY_MAX_RADIUS_M: z.coerce.number().positive().default(50_000),
  EMBEDDINGS_PROVIDER: z.enum(['local', 'openai']).default('local'),
  EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  LLM_PROVIDER: z.enum(['none', 'openai']).default('none'),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  SPEECH_ENGINE: z.enum(['auto', 'pocketsphinx', 'openai', 'none']).default('auto'),
  SPEECH_MODEL: z.string().min(1).default('whisper-1'),
  MAX_AUDIO_SECONDS: z.coerce.number().positive().default(300),
  FFMPEG_PATH: optional,
  WORKER_COUNT: z.coerce.number().int().min(1).max(16).default(1),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  METRICS_ENABLED: bool.default(true),
  // GET /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`; unset: /metrics is 404.
  METRICS_TOKEN: optional.refine((v) => v === undefined || v.length >= 16, {
    message: 'at least 16 characters (e.g. openssl rand -hex 32)',
  }),
  // 0 = off; several workers on one host take the first free port from here up.
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  // The worker touches this file every 10 s while it runs (the image's health check reads it).
  WORKER_HEARTBEAT_FILE: optional,
});

type Env = z.infer<typeof envSchema>;

export interface MinioSettings {
  endPoint: string;
  port: number;
  useSSL: boolean;
  accessKey: string;
  secretKey: string;
  bucket: string;
}

export interface Config extends Env {
  dataDir: string;
  maxUploadBytes: number;
  /** where users reach the platform (referral links): PUBLIC_URL, else http://HOST:PORT */
  publicUrl: string;
}

export class ConfigError extends Error {}

export function parseEnv(source: NodeJS.ProcessEnv = process.env): Config {
  // An empty setting is an unset one (`NAME=` in an env file, `${NAME:-}` in compose): its default,
  // never 0 or an empty string by coercion.
  const given = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = envSchema.safeParse(given);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${issues}`);
  }
  const env = parsed.data;
  if (
    env.GIFT_PROVIDER === 'reloadly' &&
    !(env.GIFT_PROVIDER_URL && env.GIFT_PROVIDER_CLIENT_ID && env.GIFT_PROVIDER_CLIENT_SECRET)
  ) {
    throw new ConfigError(
      'Invalid configuration: GIFT_PROVIDER=reloadly needs GIFT_PROVIDER_URL, GIFT_PROVIDER_CLIENT_ID and GIFT_PROVIDER_CLIENT_SECRET',
    );
  }
  return {
    ...env,
    dataDir: path.resolve(env.DATA_DIR),
    maxUploadBytes: Math.floor(env.MAX_UPLOAD_MB * 1024 * 1024),
    publicUrl: (env.PUBLIC_URL ?? `http://${env.HOST}:${env.PORT}`).replace(/\/+$/, ''),
  };
}

let cached: Config | undefined;
/** The process-wide configuration, parsed on first use. */
export function config(): Config {
  cached ??= parseEnv();
  return cached;
}

/** For processes that assemble their environment themselves (the supervisor, tests). */
export function setConfig(next: Config): void {
  cached = next;
}

/**
 * A component's slice of the configuration (its `settings.ts`, docs/architecture.md): the keys it
 * may read, by type. It reads config() when called, never at import, so a configuration set later
 * (setConfig in the tests) applies at once; it hands out the configuration itself, no copy, since
 * settings are read on hot paths.
 */
export function slice<K extends keyof Config>(keys: readonly K[]): () => Pick<Config, K> {
  void keys; // named for the type and the reader: the slice is the type
  return config;
}

export function minioSettings(cfg: Config): MinioSettings {
  if (!cfg.MINIO_ENDPOINT) throw new ConfigError('MINIO_ENDPOINT is not set');
  const [host, portText] = cfg.MINIO_ENDPOINT.replace(/^https?:\/\//, '').split(':');
  const p = portText ? Number(portText) : cfg.MINIO_USE_SSL ? 443 : 80;
  if (!host || !Number.isInteger(p))
    throw new ConfigError(`MINIO_ENDPOINT must be host:port, got ${cfg.MINIO_ENDPOINT}`);
  return {
    endPoint: host,
    port: p,
    useSSL: cfg.MINIO_USE_SSL,
    accessKey: cfg.MINIO_ACCESS_KEY ?? 'minioadmin',
    secretKey: cfg.MINIO_SECRET_KEY ?? 'minioadmin',
    bucket: cfg.MINIO_BUCKET,
  };
}
