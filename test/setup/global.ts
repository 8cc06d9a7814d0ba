/**
 * Starts the real platform for the suite: Temporal dev server, FerretDB/mongod and MinIO on free
 * ports in a temp dir (or the servers named by TEMPORAL_ADDRESS / MONGODB_URI / MINIO_ENDPOINT),
 * plus the worker and edge processes exactly as `npm start` runs them. Torn down at the end.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SMTPServer } from 'smtp-server';
import type { TestProject } from 'vitest/node';

import { parseEnv } from '../../activities/core/config.ts';
import { generateSecret } from '../../activities/identity/api-keys.ts';
import { freePort } from '../../tools/infra.ts';
import { launchPlatform } from '../../tools/platform.ts';
import { readSeen, uncovered } from '../helpers/contract.ts';
import { PLACES_TEST_KEY, startPlacesStandin } from './places-standin.ts';

/** A real SMTP server for the suite: the platform sends to it, tests read what arrived. */
async function startSmtp(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  fs.mkdirSync(dir, { recursive: true });
  let n = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    // A mailbox that does not exist: any hard-bounce-…@ address is refused for good at RCPT TO
    // (test/email/suppressions.test.ts: the platform suppresses it as a hard bounce).
    onRcptTo(address, _session, callback) {
      if (/^hard-bounce-/i.test(address.address)) {
        const err = Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 });
        return callback(err);
      }
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        n += 1;
        fs.writeFileSync(path.join(dir, `${String(n).padStart(5, '0')}.eml`), Buffer.concat(chunks));
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

declare module 'vitest' {
  export interface ProvidedContext {
    edgeUrl: string;
    adminKey: string;
    platformEnv: Record<string, string>;
    /** where the test SMTP server writes each message it receives (n.eml) */
    smtpDir: string;
    /** the Google Places stand-in the platform is configured with */
    placesUrl: string;
    /** where call() records the answers it validated against the OpenAPI document (test/helpers/contract.ts) */
    contractDir: string;
  }
}

export default async function setup(project: TestProject) {
  // The test files there are as the run starts (a file added meanwhile does not make it partial).
  const { testFiles } = await project.globTestFiles();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-test-'));
  const run = randomBytes(4).toString('hex');
  const adminKey = generateSecret();
  const smtpDir = path.join(dataDir, 'smtp-received');
  const contractDir = path.join(dataDir, 'contract');
  fs.mkdirSync(contractDir, { recursive: true });
  const smtp = await startSmtp(smtpDir);
  const places = await startPlacesStandin();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PLATFORM_ADMIN_KEY: adminKey,
    MAX_UPLOAD_MB: '5',
    MAX_IMAGE_MEGAPIXELS: '50',
    MAX_AUDIO_SECONDS: '60',
    SMTP_URL: smtp.url,
    // Webhook tests post to a receiver on 127.0.0.1: private targets (and http) allowed here only.
    // The platform-wide secret of earlier versions is still set, so a test shows it signs nothing.
    WEBHOOK_SIGNING_SECRET: `whsec_test_${run}`,
    // GET /metrics answers only this bearer token (unset: 404).
    METRICS_TOKEN: `metrics-${run}-${randomBytes(12).toString('hex')}`,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // Outgoing events retry after 0.2 s, 0.8 s, 3.2 s, ... here (5 s, 20 s, 80 s, ... by default).
    WEBHOOK_RETRY_BASE_SECONDS: '0.2',
    // Payment webhooks are signed with this (no Stripe key: purchases use the sandbox provider).
    PAYMENT_WEBHOOK_SECRET: `whsec_pay_${run}`,
    // No Stripe key: purchases with Stripe's test payment methods need the sandbox said explicitly.
    PAYMENTS_TEST_MODE: 'true',
    CONFIG_ENCRYPTION_KEY: `config-key-${run}`,
    EMAIL_FROM: 'Platform Tests <tests@platform.test>',
    // Venue details ask the local Google Places stand-in (no internet here).
    PLACES_PROVIDER: 'google',
    PLACES_API_KEY: PLACES_TEST_KEY,
    PLACES_BASE_URL: places.url,
    // Given servers are shared: this run keeps to its own task queue, bucket and database.
    TEMPORAL_TASK_QUEUE: `test-${run}`,
    MINIO_BUCKET: `test-${run}`,
    // The shared edge and worker write to the suite's output: warnings and errors only, not an
    // access line per request. Processes a test starts itself log at their usual level.
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  if (process.env.MONGODB_URI) {
    const uri = new URL(process.env.MONGODB_URI);
    uri.pathname = `/platform_test_${run}`;
    env.MONGODB_URI = uri.toString();
  }
  const cfg = parseEnv({ ...process.env, ...env });
  const started = Date.now();
  const platform = await launchPlatform({
    cfg,
    freePorts: true,
    env,
    onExit: (name, code, signal) =>
      process.stderr.write(`test platform: ${name} exited unexpectedly (${signal ?? code})\n`),
  });
  process.stderr.write(
    `test platform ready in ${((Date.now() - started) / 1000).toFixed(1)} s at ${platform.edgeUrl}\n`,
  );
  project.provide('edgeUrl', platform.edgeUrl);
  project.provide('adminKey', adminKey);
  project.provide('smtpDir', smtpDir);
  project.provide('placesUrl', places.url);
  project.provide('contractDir', contractDir);
  const { LOG_LEVEL: _quiet, ...shared } = platform.env;
  project.provide('platformEnv', {
    ...shared,
    TEMPORAL_TASK_QUEUE: cfg.TEMPORAL_TASK_QUEUE,
    TEMPORAL_NAMESPACE: cfg.TEMPORAL_NAMESPACE,
  });
  return async () => {
    // Which operations of the document never had their success answer validated (see
    // docs/testing.md). Read before the platform stops: the document comes from the edge.
    const coverage = await contractCoverage(project, testFiles, platform.edgeUrl, contractDir).catch(
      (err: Error) => err,
    );
    // How much reading the suite's queries cost the embedded server: rows it decoded per document
    // its filters matched (1.0 when every query is answered from an index; see docs/storage.md).
    if (platform.storeMetricsUrl) {
      const { decodedPerMatched } = await import('../bench/store.ts');
      const ratio = await decodedPerMatched(platform.storeMetricsUrl).catch(() => undefined);
      if (ratio !== undefined)
        process.stderr.write(
          `test platform: the embedded server decoded ${ratio.toFixed(2)} rows per document matched\n`,
        );
    }
    await platform.stop();
    await smtp.close();
    await places.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (coverage instanceof Error) throw coverage;
  };
}

/**
 * The coverage check of the OpenAPI document: every operation must have had a success answer
 * validated by call(). Printed always; enforced (an Error here makes vitest exit non-zero) only on
 * a full run: no test name filter and every test file vitest finds was run (a file filter leaves files out), so a
 * subset (`npx vitest run test/x.test.ts`, `-t`, `--shard`) reports without failing.
 */
async function contractCoverage(
  project: TestProject,
  testFiles: string[],
  edgeUrl: string,
  dir: string,
): Promise<Error | undefined> {
  const res = await fetch(`${edgeUrl}/openapi.json`);
  const doc = (await res.json()) as Record<string, any>;
  const seen = readSeen(dir);
  const missing = uncovered(doc, seen);
  const total = Object.values<Record<string, unknown>>(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  const ran = new Set(project.vitest.state.getFiles().map((f) => f.filepath));
  const full = !project.config.testNamePattern && testFiles.every((f) => ran.has(f));
  process.stderr.write(
    `contract: ${total - missing.length}/${total} operations of /openapi.json had their success answer validated${full ? '' : ' (a partial run: not enforced, the list is left out)'}\n`,
  );
  if (!missing.length || !full) return undefined;
  const list = missing.map((m) => `  ${m}`).join('\n');
  process.stderr.write(`contract: operations never exercised:\n${list}\n`);
  return new Error(
    `contract coverage: ${missing.length} operation(s) of the OpenAPI document never answered with success in the suite:\n${list}`,
  );
}
