/**
 * Webhook names are looked up by c-ares (dns.promises.Resolver), not dns.lookup: a name server
 * that never answers holds no thread of libuv's pool (file I/O, hashing, zip packing, uploads),
 * each lookup is cancelled at its deadline, and lookups at once are bounded. The "never answers"
 * name server is a local UDP socket that reads queries and replies to none.
 */
import { pbkdf2 } from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// dns.lookup (getaddrinfo on the thread pool) must never be what a webhook's check calls.
const threadPoolLookups = vi.hoisted(() => [] as string[]);
vi.mock('node:dns/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns/promises')>();
  const lookup = (host: string, ...rest: unknown[]) => (
    threadPoolLookups.push(host),
    (real.lookup as (...a: unknown[]) => unknown)(host, ...rest)
  );
  return { ...real, lookup, default: { ...real, lookup } };
});
vi.mock('node:dns', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns')>();
  const lookup = (host: string, ...rest: unknown[]) => (
    threadPoolLookups.push(host),
    (real.lookup as (...a: unknown[]) => unknown)(host, ...rest)
  );
  return { ...real, lookup, default: { ...real, lookup } };
});

const { resolveWebhookTarget, webhookResolver } = await import('../../activities/adapters/webhooks.ts');

let silent: dgram.Socket;
let server: string;
let queries = 0;

beforeAll(async () => {
  silent = dgram.createSocket('udp4');
  silent.on('message', () => (queries += 1)); // read, never answered
  await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
  server = `127.0.0.1:${silent.address().port}`;
});
afterAll(() => new Promise<void>((r) => silent.close(() => r())));

const settleTime = async (p: Promise<unknown>, started: number) => {
  await p.catch(() => undefined);
  return Date.now() - started;
};

describe('webhook name lookups', () => {
  it('hold no thread of the pool while the name server is silent, and end at their deadline', async () => {
    const resolve = webhookResolver({ servers: [server], timeout_ms: 2000 });
    const started = Date.now();
    // Twice as many lookups as the pool has threads: with getaddrinfo, these would hold all four.
    const lookups = Array.from({ length: 8 }, (_, i) => resolve(`hook-${i}.silent.test`));
    const settled = lookups.map((l) => settleTime(l, started));
    await new Promise((r) => setTimeout(r, 100));
    const poolStarted = Date.now();
    const file = path.join(os.tmpdir(), `dns-pool-${process.pid}.txt`);
    await Promise.all([
      ...Array.from(
        { length: 4 },
        () =>
          new Promise<void>((ok, fail) =>
            pbkdf2('secret', 'salt', 20_000, 32, 'sha256', (err) => (err ? fail(err) : ok())),
          ),
      ),
      fs.promises
        .writeFile(file, 'x'.repeat(100_000))
        .then(() => fs.promises.readFile(file))
        .then(() => fs.promises.rm(file)),
    ]);
    const poolMs = Date.now() - poolStarted;
    expect(poolMs, 'thread pool work while 8 lookups wait').toBeLessThan(1000);
    expect(Date.now() - started, 'the pool finished before any lookup ended').toBeLessThan(1900);

    const times = await Promise.all(settled);
    for (const lookup of lookups) await expect(lookup).rejects.toThrow(/no answer from the name server within 2 s/);
    // Cancelled at the 2 s deadline, not at c-ares' own timeouts (two tries, the second longer).
    for (const ms of times) {
      expect(ms).toBeGreaterThanOrEqual(1950);
      expect(ms).toBeLessThan(2600);
    }
    expect(queries, 'the lookups asked the silent server').toBeGreaterThanOrEqual(8);
  });

  it('are bounded: past the lookups at once and the queue, one more is refused at once (503)', async () => {
    const resolve = webhookResolver({ servers: [server], timeout_ms: 1500, max_concurrent: 2, max_waiting: 1 });
    const started = Date.now();
    const held = [resolve('a.silent.test'), resolve('b.silent.test'), resolve('c.silent.test')];
    const refused = resolve('d.silent.test');
    await expect(refused).rejects.toMatchObject({
      status: 503,
      message: expect.stringMatching(/too many webhook address lookups/i),
    });
    expect(Date.now() - started).toBeLessThan(200);
    // The one that waited for a slot ends at its own deadline too.
    const times = await Promise.all(held.map((l) => settleTime(l, started)));
    for (const ms of times) expect(ms).toBeLessThan(2200);
    for (const lookup of held) await expect(lookup).rejects.toThrow(/no answer/);
  });

  it("answer localhost and the hosts file's names without a name server; the address check still applies", async () => {
    const hosts = path.join(os.tmpdir(), `hosts-${process.pid}`);
    fs.writeFileSync(
      hosts,
      '# test hosts\n127.0.0.1 localhost\n10.1.2.3   hooks.internal.test  alias.internal.test # a comment\n',
    );
    try {
      const resolve = webhookResolver({ servers: [server], timeout_ms: 1000, hosts_file: hosts });
      const started = Date.now();
      expect(await resolve('localhost')).toEqual([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]);
      expect(await resolve('Alias.Internal.Test.')).toEqual([{ address: '10.1.2.3', family: 4 }]);
      expect(Date.now() - started).toBeLessThan(500);
      const target = await resolveWebhookTarget('http://hooks.internal.test:4000/in', true, resolve);
      expect(target.addresses).toEqual([{ address: '10.1.2.3', family: 4 }]);
      await expect(resolveWebhookTarget('https://hooks.internal.test/in', false, resolve)).rejects.toThrow(
        /hooks\.internal\.test is a private or local address/,
      );
      // A name the hosts file does not list goes to the (silent) name server: 422 at the deadline.
      await expect(resolveWebhookTarget('https://elsewhere.silent.test/in', true, resolve)).rejects.toMatchObject({
        status: 422,
        message: expect.stringMatching(
          /elsewhere\.silent\.test does not resolve \(no answer from the name server within 1 s\)/,
        ),
      });
    } finally {
      fs.rmSync(hosts, { force: true });
    }
  });

  it("the platform's own check never calls dns.lookup (the thread pool)", async () => {
    threadPoolLookups.length = 0;
    // localhost answers locally; the other name goes to the system's name servers through c-ares.
    const local = await resolveWebhookTarget('http://localhost:4000/in', true);
    await resolveWebhookTarget('https://hooks.example.invalid/in', true).catch(() => undefined);
    expect(threadPoolLookups).toEqual([]);
    expect(local.addresses).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
  });
});
