/**
 * Finds or starts the local infrastructure: a Temporal dev server, a MongoDB-wire server (mongod or
 * FerretDB with SQLite) and MinIO. Addresses given in the environment are used as they are.
 * Each started server runs under guard.sh, so it dies with this process even on SIGKILL, and is
 * supervised: one that exits is started again on the same port and data (tools/supervise.ts);
 * one that keeps failing is given up and onFatal says why.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import mongoose from 'mongoose';

import type { Config } from '../activities/core/config.ts';
import { prepareServers } from '../workers/servers.ts';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes.ts';
import { type BinaryName, ensureBinaries } from './setup.ts';
import { type ServerSpec, startServer, type Supervised } from './supervise.ts';

export interface InfraOptions {
  cfg: Config;
  /** pick free ports instead of the LOCAL_*_PORT values (tests) */
  freePorts?: boolean;
  /** start the Temporal Web UI (npm start) or not (tests) */
  ui?: boolean;
  log?: (line: string) => void;
  /** a started server died and could not be restarted */
  onFatal?: (reason: string) => void;
}

/** the workflow task timeout of the dev server (docs/running.md, Scaling out) */
export const WORKFLOW_TASK_TIMEOUT = '5s';

export interface Infra {
  env: Record<string, string>;
  temporalUi?: string;
  /** the embedded FerretDB's Prometheus metrics (rows decoded, documents matched), when it runs one */
  storeMetricsUrl?: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

async function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

const parseEnvPart = (env: Record<string, string>) => ({
  TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS,
  MINIO_ENDPOINT: env.MINIO_ENDPOINT,
  MINIO_ACCESS_KEY: env.MINIO_ACCESS_KEY,
  MINIO_SECRET_KEY: env.MINIO_SECRET_KEY,
});

export async function startInfra(opts: InfraOptions): Promise<Infra> {
  const { cfg } = opts;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const servers: Supervised[] = [];
  const env: Record<string, string> = {};
  let storeMetricsUrl: string | undefined;
  const logDir = path.join(cfg.dataDir, 'logs');
  fs.mkdirSync(cfg.dataDir, { recursive: true });

  const need: BinaryName[] = [];
  if (!cfg.TEMPORAL_ADDRESS) need.push('temporal');
  if (!cfg.MONGODB_URI) need.push('mongo');
  if (!cfg.MINIO_ENDPOINT) need.push('minio');
  const bins = await ensureBinaries(need);

  const pick = async (configured: number) => {
    if (opts.freePorts) return freePort();
    if (await portInUse(configured)) {
      throw new Error(
        `port ${configured} is already in use; set the matching LOCAL_*_PORT or give the server's address in the environment`,
      );
    }
    return configured;
  };
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop(10_000)));
  };
  const giveUp = (reason: string) => opts.onFatal?.(reason);
  const start = (spec: ServerSpec) => {
    const { server, ready } = startServer(spec, logDir, log, giveUp);
    servers.push(server);
    return ready;
  };

  try {
    const starts: Promise<void>[] = [];
    let temporalUi: string | undefined;

    if (!cfg.TEMPORAL_ADDRESS) {
      const port = await pick(cfg.LOCAL_TEMPORAL_PORT);
      const uiPort = opts.ui ? (opts.freePorts ? await freePort() : await pick(cfg.LOCAL_TEMPORAL_UI_PORT)) : undefined;
      const args = [
        'server',
        'start-dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--db-filename',
        path.join(cfg.dataDir, 'temporal.sqlite'),
        '--namespace',
        cfg.TEMPORAL_NAMESPACE,
        '--log-level',
        'warn',
        '--http-port',
        String(await freePort()),
        '--metrics-port',
        String(await freePort()),
      ];
      // WAL with synchronous=NORMAL, as for FerretDB: a commit survives a crash of any process,
      // not a power cut (docs/storage.md, Durability); the default rollback journal syncs every commit.
      args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
      // A worker killed in the middle of a workflow task holds it until this timeout (Temporal's
      // default is 10 s); then another worker or the restarted one takes it over. Shorter keeps a
      // crash to a few seconds of latency; local activities that outlast 80% of it keep their
      // task alive with heartbeats.
      args.push('--dynamic-config-value', `history.defaultWorkflowTaskTimeout="${WORKFLOW_TASK_TIMEOUT}"`);
      for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=Keyword`);
      if (uiPort) args.push('--ui-port', String(uiPort));
      else args.push('--headless');
      const address = `127.0.0.1:${port}`;
      env.TEMPORAL_ADDRESS = address;
      if (uiPort) temporalUi = `http://127.0.0.1:${uiPort}`;
      log(`infra: starting Temporal dev server on ${address}${uiPort ? `, Web UI ${temporalUi}` : ''}`);
      starts.push(
        start({
          name: 'Temporal dev server',
          file: 'temporal',
          cmd: bins.temporal!,
          args,
          timeoutMs: 120_000,
          check: async () => {
            const conn = await Connection.connect({ address, connectTimeout: 1000 });
            try {
              await conn.workflowService.describeNamespace({ namespace: cfg.TEMPORAL_NAMESPACE });
              // How long ended runs (their inputs and histories) are kept: docs/privacy.md.
              await conn.workflowService.updateNamespace({
                namespace: cfg.TEMPORAL_NAMESPACE,
                config: { workflowExecutionRetentionTtl: msToTs(cfg.TEMPORAL_RETENTION_DAYS * 86_400_000) },
              });
              return true;
            } finally {
              await conn.close();
            }
          },
        }),
      );
    } else {
      env.TEMPORAL_ADDRESS = cfg.TEMPORAL_ADDRESS;
    }

    if (!cfg.MONGODB_URI) {
      const port = await pick(cfg.LOCAL_MONGODB_PORT);
      const mongo = bins.mongo!;
      let args: string[];
      if (mongo.kind === 'mongod') {
        const dbPath = path.join(cfg.dataDir, 'mongodb');
        fs.mkdirSync(dbPath, { recursive: true });
        args = ['--dbpath', dbPath, '--port', String(port), '--bind_ip', '127.0.0.1'];
      } else {
        const dbPath = path.join(cfg.dataDir, 'ferretdb');
        fs.mkdirSync(dbPath, { recursive: true });
        const debugPort = await freePort();
        storeMetricsUrl = `http://127.0.0.1:${debugPort}/debug/metrics`;
        args = [
          '--handler=sqlite',
          // WAL (FerretDB's default) with synchronous=NORMAL: a commit survives a crash of any
          // process, not a power cut, and concurrent inserts go from ~680/s to ~2,100/s here.
          `--sqlite-url=file:${dbPath}/?_pragma=synchronous(NORMAL)`,
          `--listen-addr=127.0.0.1:${port}`,
          `--state-dir=${dbPath}`,
          `--debug-addr=127.0.0.1:${debugPort}`,
          '--telemetry=disable',
          '--log-level=WARN',
        ];
      }
      const uri = `mongodb://127.0.0.1:${port}/platform`;
      env.MONGODB_URI = uri;
      log(`infra: starting ${mongo.kind} on 127.0.0.1:${port}`);
      starts.push(
        start({
          name: mongo.kind,
          file: mongo.kind === 'mongod' ? 'mongodb' : 'ferretdb',
          cmd: mongo.path,
          args,
          check: async () => {
            const conn = await mongoose.createConnection(uri, { serverSelectionTimeoutMS: 1000 }).asPromise();
            try {
              await conn.db!.admin().ping();
              return true;
            } finally {
              await conn.close();
            }
          },
        }),
      );
    } else {
      env.MONGODB_URI = cfg.MONGODB_URI;
    }

    if (!cfg.MINIO_ENDPOINT) {
      const port = await pick(cfg.LOCAL_MINIO_PORT);
      const consolePort = await freePort();
      const dir = path.join(cfg.dataDir, 'minio');
      fs.mkdirSync(dir, { recursive: true });
      const accessKey = cfg.MINIO_ACCESS_KEY ?? 'minioadmin';
      const secretKey = cfg.MINIO_SECRET_KEY ?? 'minioadmin';
      Object.assign(env, {
        MINIO_ENDPOINT: `127.0.0.1:${port}`,
        MINIO_ACCESS_KEY: accessKey,
        MINIO_SECRET_KEY: secretKey,
        MINIO_USE_SSL: 'false',
      });
      log(`infra: starting MinIO on 127.0.0.1:${port}`);
      starts.push(
        start({
          name: 'MinIO',
          file: 'minio',
          cmd: bins.minio!,
          args: [
            'server',
            '--quiet',
            '--address',
            `127.0.0.1:${port}`,
            '--console-address',
            `127.0.0.1:${consolePort}`,
            dir,
          ],
          env: {
            MINIO_ROOT_USER: accessKey,
            MINIO_ROOT_PASSWORD: secretKey,
            MINIO_BROWSER: 'off',
            MINIO_UPDATE: 'off',
          },
          check: async () => (await fetch(`http://127.0.0.1:${port}/minio/health/live`)).ok,
        }),
      );
    } else {
      Object.assign(env, {
        MINIO_ENDPOINT: cfg.MINIO_ENDPOINT,
        MINIO_ACCESS_KEY: cfg.MINIO_ACCESS_KEY ?? 'minioadmin',
        MINIO_SECRET_KEY: cfg.MINIO_SECRET_KEY ?? 'minioadmin',
        MINIO_USE_SSL: String(cfg.MINIO_USE_SSL),
      });
    }
    env.MINIO_BUCKET = cfg.MINIO_BUCKET;

    await Promise.all(starts);

    await prepareServers({ ...cfg, ...parseEnvPart(env) });
    return { env, temporalUi, storeMetricsUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
