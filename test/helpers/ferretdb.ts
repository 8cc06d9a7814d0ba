/**
 * A private embedded server for the store tests: the FerretDB that setup built (with
 * tools/patches), on its own temporary SQLite directory, with its metrics endpoint. The tests
 * that use it check FerretDB's own behaviour (plans, atomicity, decode counts), so they run
 * against the embedded server even when the suite itself is pointed at another one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import mongoose from 'mongoose';

import { freePort } from '../../tools/infra.ts';
import { findBinaries } from '../../tools/setup.ts';

export interface PrivateFerret {
  client: mongoose.mongo.MongoClient;
  db: mongoose.mongo.Db;
  /** The value of a counter on the server's /debug/metrics. */
  metric(name: string): Promise<number>;
  /** Stops the server; `restart` starts it again on the same data. */
  stop(): Promise<void>;
  restart(): Promise<void>;
}

/** undefined when setup found no FerretDB (a mongod is used instead). */
export async function startPrivateFerret(maxPoolSize = 100): Promise<PrivateFerret | undefined> {
  const mongo = findBinaries().mongo;
  if (mongo?.kind !== 'ferretdb') return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferret-store-'));
  let proc: ChildProcess;
  let port = 0;
  let debugPort = 0;
  let client!: mongoose.mongo.MongoClient;
  const start = async () => {
    [port, debugPort] = [await freePort(), await freePort()];
    proc = spawn(
      mongo.path,
      [
        '--handler=sqlite',
        `--sqlite-url=file:${dir}/?_pragma=synchronous(NORMAL)`,
        `--listen-addr=127.0.0.1:${port}`,
        `--state-dir=${dir}`,
        `--debug-addr=127.0.0.1:${debugPort}`,
        '--telemetry=disable',
        '--log-level=error',
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; ; i++) {
      try {
        client = await new mongoose.mongo.MongoClient(`mongodb://127.0.0.1:${port}/`, {
          maxPoolSize,
          serverSelectionTimeoutMS: 500,
        }).connect();
        break;
      } catch (err) {
        if (i > 60) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    ferret.client = client;
    ferret.db = client.db('store');
  };
  const stop = async () => {
    await client.close().catch(() => {});
    proc.kill();
    await new Promise((r) => proc.once('exit', r));
  };
  const ferret: PrivateFerret = {
    client,
    db: undefined as never,
    async metric(name) {
      const text = await (await fetch(`http://127.0.0.1:${debugPort}/debug/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line ? Number(line.split(' ')[1]) : Number.NaN;
    },
    async stop() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stop();
      await start();
    },
  };
  await start();
  return ferret;
}
