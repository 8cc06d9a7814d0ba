import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkWebhookTarget, isPrivateAddress, signature } from '../../activities/engines/webhooks';

describe('webhook targets', () => {
  it.each(['127.0.0.1', '10.2.3.4', '172.20.0.1', '192.168.1.10', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '::ffff:10.0.0.1'])('%s is private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });
  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111'])('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  it('accepts only https URLs on public addresses unless private targets are allowed', async () => {
    await expect(checkWebhookTarget('https://93.184.216.34/hook', false)).resolves.toBeInstanceOf(URL);
    for (const [url, why] of [
      ['http://93.184.216.34/hook', /https/],
      ['https://127.0.0.1/hook', /private or local/],
      ['https://10.0.0.7/hook', /private or local/],
      ['https://[::1]/hook', /private or local/],
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

  it('signs like Stripe: t=<unix>,v1=<hmac of "t.body">', () => {
    const sig = signature('whsec_x', '{"a":1}', 1_700_000_000);
    expect(sig).toBe(`t=1700000000,v1=${createHmac('sha256', 'whsec_x').update('1700000000.{"a":1}').digest('hex')}`);
  });
});
