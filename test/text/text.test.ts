import { Client as MinioClient } from 'minio';
import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant } from '../helpers/api.ts';

async function stored(path: string): Promise<string> {
  const e = inject('platformEnv');
  const [host, port] = e.MINIO_ENDPOINT.split(':');
  const minio = new MinioClient({
    endPoint: host,
    port: Number(port),
    useSSL: false,
    accessKey: e.MINIO_ACCESS_KEY,
    secretKey: e.MINIO_SECRET_KEY,
  });
  const chunks: Buffer[] = [];
  for await (const c of await minio.getObject(e.MINIO_BUCKET, path)) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const complaint =
  'My pizza delivery was two hours late and arrived cold. I paid $24.90 on 2026-11-20 and want a refund. Write to me at ana@example.com.';

describe('POST /process_text', () => {
  it('stores, analyses and embeds a text, and records the normalized response', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const res = await call('POST', '/process_text', {
      key: u.key,
      json: {
        text: complaint,
        user_id: u.idp_id,
        conversation_id: 'conv_text',
        session_id: 's1',
        timestamp: '2026-11-22T10:00:00Z',
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ success: true, error: null, organization_id: t.organization_id });
    expect(res.body.file_path).toMatch(new RegExp(`^${t.organization_id}/${u.user_id}/texts/txt_[\\w-]+\\.txt$`));
    expect(res.body.embedding_id).toMatch(/^emb_/);
    expect(await stored(res.body.file_path)).toBe(complaint);
    expect(res.body.metadata).toMatchObject({
      language: 'en',
      sentence_count: 3,
      entities: { emails: ['ana@example.com'], amounts: ['$24.90'], dates: ['2026-11-20'] },
      sentiment: { label: 'negative' },
      embedding: { engine: 'hashed-v1', dimensions: 256 },
      session_id: 's1',
      timestamp: '2026-11-22T10:00:00Z',
    });
    expect(res.body.metadata.keywords.map((k: any) => k.term)).toContain('pizza');
    const normalized = await call('GET', `/get_response/conv_text?user_id=${u.user_id}`, { key: u.key });
    expect(normalized.body).toMatchObject({
      message: res.body.message,
      metadata: { source: 'text', embedding_id: res.body.embedding_id },
    });
  });

  it.each([
    [{ user_id: 'u', conversation_id: 'c' }, /^text/],
    [{ text: '   ', user_id: 'u', conversation_id: 'c' }, /^text: must not be empty/],
    [{ text: 'hi', conversation_id: 'c' }, /^user_id/],
    [{ text: 'hi', user_id: 'u' }, /^conversation_id/],
    [{ text: 'hi', user_id: 'u', conversation_id: 'c', timestamp: 'yesterday' }, /^timestamp/],
  ])('answers invalid input with 400 {success:false, error} (%#)', async (body, message) => {
    const t = await newTenant();
    const res = await call('POST', '/process_text', { key: t.adminKey, json: body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(message);
  });

  it('keeps the {success:false, error} shape for auth and malformed JSON', async () => {
    expect((await call('POST', '/process_text', { json: { text: 'x' } })).body).toEqual({
      success: false,
      error: 'Not authenticated',
    });
    const t = await newTenant();
    const bad = await call('POST', '/process_text', {
      key: t.adminKey,
      body: '{"text":',
      contentType: 'application/json',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.success).toBe(false);
  });
});

describe('POST /process_text on hostile text', () => {
  // Each aimed at a pattern that used to backtrack: 100,000 `a` took 21 s, and /health waited
  // behind it, when the analysis ran on the edge.
  const N = 500_000;
  const HOSTILE: [string, string][] = [
    ['a', 'a'.repeat(N)],
    ['a@', 'a@'.repeat(N / 2)],
    ['.', '.'.repeat(N)],
    ['1', '1'.repeat(N)],
    ['1,', '1,'.repeat(N / 2)],
    ['http://', 'http://'.repeat(Math.floor(N / 7))],
  ];
  let tenant: Promise<{ key: string; user_id: string }> | undefined;

  it.each(HOSTILE)(
    'answers 500,000 characters of %j within 15 s while /health answers within 1 s',
    async (_unit, text) => {
      tenant ??= newTenant().then((t) => basicUser(t));
      const u = await tenant;
      const started = performance.now();
      let done = false;
      const processing = call('POST', '/process_text', {
        key: u.key,
        json: { text, user_id: u.user_id, conversation_id: 'conv_hostile' },
      }).finally(() => {
        done = true;
      });
      const health: number[] = [];
      do {
        const asked = performance.now();
        const res = await call('GET', '/health');
        health.push(performance.now() - asked);
        expect(res.status).toBe(200);
        await new Promise((r) => setTimeout(r, 100));
      } while (!done);
      const res = await processing;
      const took = performance.now() - started;
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      expect(res.body.metadata).toMatchObject({
        characters: text.length,
        engine: 'local',
        embedding: { engine: 'hashed-v1' },
      });
      expect(Math.max(...health)).toBeLessThan(1000);
      expect(took).toBeLessThan(15_000);
    },
  );
});

describe('POST /text/similar', () => {
  it('ranks related texts first, within the organization only', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const process = (key: string, text: string, user: string) =>
      call('POST', '/process_text', { key, json: { text, user_id: user, conversation_id: 'c' } });
    const pizza = await process(t.adminKey, complaint, 'ana');
    await process(t.adminKey, 'The quarterly tax report is due to the accounting department on Friday.', 'ben');
    await process(t.adminKey, 'Cold pizza again! The delivery was late; I asked for a refund.', 'carla');
    await process(other.adminKey, 'My pizza delivery was late and cold, refund please.', 'dan');
    const byQuery = await call('POST', '/text/similar', {
      key: t.adminKey,
      json: { query: 'late cold pizza delivery refund', limit: 3 },
    });
    expect(byQuery.status).toBe(200);
    expect(byQuery.body.results).toHaveLength(3);
    expect(byQuery.body.results.map((r: any) => r.excerpt)[2]).toMatch(/tax report/);
    expect(byQuery.body.results.every((r: any) => r.file_path.startsWith(`${t.organization_id}/`))).toBe(true);
    const byId = await call('POST', '/text/similar', {
      key: t.adminKey,
      json: { embedding_id: pizza.body.embedding_id, limit: 1 },
    });
    expect(byId.body.results[0].excerpt).toMatch(/Cold pizza again/);
    const foreign = await call('POST', '/text/similar', {
      key: other.adminKey,
      json: { embedding_id: pizza.body.embedding_id },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.success).toBe(false);
    expect(
      (
        await call('POST', '/text/similar', {
          key: t.adminKey,
          json: { query: 'x', embedding_id: pizza.body.embedding_id },
        })
      ).status,
    ).toBe(400);
  });

  it('keeps a basic key to its own texts', async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    await call('POST', '/process_text', {
      key: a.key,
      json: { text: 'pizza delivery refund', user_id: a.user_id, conversation_id: 'c' },
    });
    const bText = await call('POST', '/process_text', {
      key: b.key,
      json: { text: 'pizza delivery refund again', user_id: b.user_id, conversation_id: 'c' },
    });
    const res = await call('POST', '/text/similar', { key: a.key, json: { query: 'pizza refund' } });
    expect(res.body.results.map((r: any) => r.user_id)).toEqual([a.user_id]);
    expect(
      (await call('POST', '/text/similar', { key: a.key, json: { embedding_id: bText.body.embedding_id } })).status,
    ).toBe(404);
  });
});
