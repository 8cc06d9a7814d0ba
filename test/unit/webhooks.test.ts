import { createHmac } from 'node:crypto';
import http from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import {
  checkWebhookTarget,
  deliverWebhook,
  isPrivateAddress,
  type Resolver,
  signature,
} from '../../activities/adapters/webhooks.ts';
import { config, parseEnv, setConfig } from '../../activities/core/config.ts';

describe('webhook targets', () => {
  it.each([
    '127.0.0.1',
    '10.2.3.4',
    '172.20.0.1',
    '192.168.1.10',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:10.0.0.1',
  ])('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });
  it.each([
    '::ffff:7f00:1',
    '::ffff:127.0.0.1',
    '::ffff:0:7f00:1',
    '::ffff:a9fe:a9fe',
    '::',
    '::127.0.0.1',
    '0:0:0:0:0:0:0:1',
    '64:ff9b::7f00:1',
    '64:ff9b::10.1.2.3',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::8.8.8.8',
    '2002:7f00:1::1',
    '2002:c0a8:101::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:db8::1',
    'fec0::1',
    'ff02::1',
    '192.0.2.1',
    '255.255.255.255',
    'not an address',
  ])('%s is private too (IPv4 inside IPv6, NAT64, 6to4, Teredo, reserved)', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });
  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2a00:1450:4001:82b::200e',
  ])('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  it('accepts only https URLs on public addresses unless private targets are allowed', async () => {
    await expect(checkWebhookTarget('https://93.184.216.34/hook', false)).resolves.toBeInstanceOf(URL);
    for (const [url, why] of [
      ['http://93.184.216.34/hook', /https/],
      ['https://127.0.0.1/hook', /private or local/],
      ['https://10.0.0.7/hook', /private or local/],
      ['https://[::1]/hook', /private or local/],
      ['https://[::ffff:127.0.0.1]/hook', /private or local/],
      ['https://[::ffff:7f00:1]:8443/hook', /private or local/],
      ['https://[64:ff9b::127.0.0.1]/hook', /private or local/],
      ['https://[64:ff9b::a9fe:a9fe]/latest/meta-data', /private or local/],
      ['https://0.0.0.0/hook', /private or local/],
      ['https://[::]/hook', /private or local/],
      ['https://0x7f.1/hook', /private or local/],
      ['https://2130706433/hook', /private or local/],
      ['https://localhost/hook', /private or local|does not resolve/],
      ['https://user:pw@93.184.216.34/', /credentials/],
      ['ftp://93.184.216.34/', /https/],
      ['not a url', /not a URL/],
      [42, /needs metadata.url/],
    ] as const) {
      await expect(checkWebhookTarget(url, false), String(url)).rejects.toThrow(why);
    }
    await expect(checkWebhookTarget('http://127.0.0.1:9/hook', true)).resolves.toBeInstanceOf(URL);
  });

  it('refuses a name when any of its addresses is private', async () => {
    const resolve: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '::ffff:10.0.0.1', family: 6 },
    ];
    await expect(checkWebhookTarget('https://hooks.example.com/x', false, resolve)).rejects.toThrow(
      /hooks\.example\.com is a private or local address/,
    );
    const none: Resolver = async () => [];
    await expect(checkWebhookTarget('https://hooks.example.com/x', false, none)).rejects.toThrow(/does not resolve/);
  });

  it('signs like Stripe: t=<unix>,v1=<hmac of "t.body">, one v1 per secret during a rotation', () => {
    const hmac = (secret: string) => createHmac('sha256', secret).update('1700000000.{"a":1}').digest('hex');
    expect(signature('whsec_x', '{"a":1}', 1_700_000_000)).toBe(`t=1700000000,v1=${hmac('whsec_x')}`);
    expect(signature(['whsec_new', 'whsec_old'], '{"a":1}', 1_700_000_000)).toBe(
      `t=1700000000,v1=${hmac('whsec_new')},v1=${hmac('whsec_old')}`,
    );
  });
});

describe('webhook delivery', () => {
  const saved = config();
  afterEach(() => setConfig(saved));

  it('resolves the name once and connects to the address it checked, keeping the Host header', async () => {
    const seen: { host?: string; signature?: string; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ host: req.headers.host, signature: req.headers['x-platform-signature'] as string, body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      setConfig(parseEnv({ WEBHOOK_ALLOW_PRIVATE: 'true' }));
      const asked: string[] = [];
      // `.invalid` never resolves in real DNS: only the checked answer can have been used.
      const resolve: Resolver = async (host) => (asked.push(host), [{ address: '127.0.0.1', family: 4 }]);
      const out = await deliverWebhook(`http://hooks.invalid:${port}/in`, { a: 1 }, 'run-1', ['whsec_unit'], resolve);
      expect(out).toEqual({ status: 200 });
      expect(asked).toEqual(['hooks.invalid']);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ host: `hooks.invalid:${port}`, body: '{"a":1}' });
      expect(seen[0].signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('never connects when the check refuses the answer', async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => res.end('ok')).on('connection', () => (connections += 1));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      setConfig(parseEnv({ WEBHOOK_ALLOW_PRIVATE: 'false' }));
      const resolve: Resolver = async () => [{ address: '::ffff:127.0.0.1', family: 6 }];
      await expect(
        deliverWebhook(`https://hooks.invalid:${port}/in`, {}, 'run-2', ['whsec_unit'], resolve),
      ).rejects.toMatchObject({ status: 422 });
      await expect(
        deliverWebhook(`https://[::ffff:127.0.0.1]:${port}/in`, {}, 'run-3', ['whsec_unit']),
      ).rejects.toMatchObject({ status: 422 });
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
