/**
 * Model calls through the LLM gateway (LLM_PROVIDER=openai as the default) for support answers,
 * feedback analysis and embeddings, metered against the user's tokens. The model provider is outside
 * this machine, so a local HTTP server stands in for its chat completions API (mocked provider
 * API); MongoDB is the suite's real server. Checks what is sent (only the retrieved passages)
 * and that the answer and labels say which model produced them.
 */
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { recognize } from '../../activities/adapters/ocr.ts';
import { transcribe } from '../../activities/adapters/speech.ts';
import { createPackage, purchaseTokens, tokenUsage } from '../../activities/billing/billing.ts';
import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { closeRuntime, initRuntime } from '../../activities/core/runtime.ts';
import { analyseFeedback, storeFeedback } from '../../activities/feedback/feedback.ts';
import { createOrganization } from '../../activities/identity/organizations.ts';
import { updateOrganizationConfig, updateProviderConfig } from '../../activities/llm/configs.ts';
import { speechRoute, visionModel } from '../../activities/llm/engine-models.ts';
import { AGENTS } from '../../activities/llm/models.ts';
import { answerQuestion, createArticle } from '../../activities/support/support.ts';
import { processStoredText, type ProcessTextInput, similarTexts, storeText } from '../../activities/text/text.ts';
import { freePort } from '../../tools/infra.ts';
import { unique } from '../helpers/api.ts';
import { speak } from '../helpers/speech.ts';

const requests: any[] = [];

/** What /process_text does (store, then analyse and embed), in this process. */
const processText = async (input: ProcessTextInput) => processStoredText({ ...input, ...(await storeText(input)) });
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const body = req.url === '/v1/audio/transcriptions' ? { multipart: raw.length } : JSON.parse(raw.toString('utf8'));
    requests.push(body);
    if (req.url === '/v1/audio/transcriptions') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ text: 'i forgot my password' }));
      return;
    }
    if (req.url === '/v1/embeddings') {
      // A 3-dimension "model": refund-ish texts point one way, delivery-ish another.
      const t = String(body.input).toLowerCase();
      const v = [
        t.includes('refund') || t.includes('money') ? 1 : 0,
        t.includes('late') || t.includes('delivery') ? 1 : 0,
        0.1,
      ];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model: 'embed-test',
          data: [{ object: 'embedding', index: 0, embedding: v }],
          usage: { prompt_tokens: 5, total_tokens: 5 },
        }),
      );
      return;
    }
    const system: string = body.messages?.[0]?.content ?? '';
    const user: string = body.messages[1].content;
    let content = 'I_DONT_KNOW';
    if (system.includes('You transcribe receipts')) content = 'FRESH MART\nWhole Milk 1L   1.25\nTOTAL   1.25';
    else if (system.includes('Classify customer feedback'))
      content =
        '```json\n{"sentiment_score": -0.8, "categories": [{"category": "scanning", "polarity": "complaint"}, {"category": "made_up", "polarity": "praise"}]}\n```';
    else if (user.includes('refund within 30 days'))
      content = 'Request a refund in the app within 30 days of purchase [1].';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion',
        created: 0,
        model: 'mock-model',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
        usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
      }),
    );
  });
});

beforeAll(async () => {
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  setConfig(
    parseEnv({
      ...process.env,
      ...inject('platformEnv'),
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'mock-model',
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_MODEL: 'embed-test',
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_KEY: 'sk-test',
    }),
  );
  await initRuntime();
  // Provider settings are global per agent (other tests may have pointed them elsewhere): every
  // agent's calls go to this file's stand-in.
  for (const agent of AGENTS)
    await updateProviderConfig(
      agent,
      { provider: 'openai', base_url: `http://127.0.0.1:${port}/v1`, api_key: 'sk-test' },
      'usr_test',
    );
});
afterAll(async () => {
  await closeRuntime();
  await new Promise<void>((r) => server.close(() => r()));
});

/** An organization whose user holds `tokens` tokens (bought in the sandbox). */
async function funded(tokens: number, tier: 'free' | 'business' = 'free'): Promise<string> {
  const org = unique('llm-org');
  await createOrganization({ organization_id: org, name: org, tier });
  if (tokens > 0) {
    const pkg = await createPackage({ name: 'test', tokens, price: 1, currency: 'USD', validity_days: 30 });
    await purchaseTokens({ organization_id: org, user_id: 'usr_x', package_id: pkg.id, token: 'pm_card_visa' });
  }
  return org;
}

describe('LLM gateway (mocked provider API: a local stand-in OpenAI-compatible server)', () => {
  it('answers support questions from the retrieved passages only, and never sends an unrelated question', async () => {
    const org = await funded(10_000);
    await createArticle(
      org,
      { title: 'Refund policy', body: 'You can request a refund within 30 days of purchase.' },
      'usr_admin',
    );
    await createArticle(org, { title: 'Shipping', body: 'Orders ship within 2 business days.' }, 'usr_admin');
    const out = await answerQuestion({
      organization_id: org,
      user_id: 'usr_x',
      conversation_id: unique('conv'),
      prompt: 'How can I get my money back?',
    });
    expect(out).toMatchObject({
      response: 'Request a refund in the app within 30 days of purchase [1].',
      metadata: { source_agent: 'llm:mock-model', escalate: false },
    });
    const sent = requests.at(-1);
    expect(sent.model).toBe('mock-model');
    expect(sent.messages[1].content).toContain('[1] Refund policy');
    expect(sent.messages[1].content).not.toContain('Orders ship');
    const before = requests.length;
    const unrelated = await answerQuestion({
      organization_id: org,
      user_id: 'usr_x',
      conversation_id: unique('conv'),
      prompt: 'Who won the football match?',
    });
    expect(unrelated.metadata.escalate).toBe(true);
    expect(requests.length).toBe(before);
    // metered: the stand-in reports 60 tokens per call
    expect(await tokenUsage(org, 'usr_x')).toMatchObject({
      total_tokens: 60,
      remaining_tokens: 10_000 - 60,
      usage_by_agent: { support: 60 },
    });
  });

  it('refuses a call the remaining tokens cannot cover, before it runs (402)', async () => {
    const org = await funded(100);
    await createArticle(
      org,
      { title: 'Refund policy', body: 'You can request a refund within 30 days of purchase.' },
      'usr_admin',
    );
    const before = requests.length;
    await expect(
      answerQuestion({
        organization_id: org,
        user_id: 'usr_x',
        conversation_id: unique('conv'),
        prompt: 'How can I get my money back?',
      }),
    ).rejects.toMatchObject({ status: 402, message: expect.stringMatching(/Not enough tokens for this support call/) });
    expect(requests.length).toBe(before);
    expect((await tokenUsage(org, 'usr_x')).remaining_tokens).toBe(100);
  });

  it('classifies feedback with the model, keeping only known categories', async () => {
    const id = await storeFeedback({
      organization_id: await funded(1000),
      user_id: 'usr_x',
      feedback_type: 'complaint',
      rating: 1,
      comment: 'Scanning never works.',
    });
    expect(await analyseFeedback(id)).toEqual({
      sentiment_score: -0.8,
      sentiment_label: 'negative',
      categories: [{ category: 'scanning', polarity: 'complaint' }],
      engine: 'llm:mock-model',
    });
  });

  it('embeds texts with the configured model and compares only vectors of that engine', async () => {
    const org = await funded(10_000);
    const base = { organization_id: org, user_id: 'usr_x', idp_id: 'x', conversation_id: unique('conv') };
    const a = await processText({ ...base, text: 'I want my money back, please refund me.' });
    await processText({ ...base, text: 'The delivery was late again.' });
    expect(a.metadata.embedding).toEqual({ engine: 'llm:embed-test', dimensions: 3 });
    const hits = await similarTexts({ organization_id: org, caller_user_id: 'usr_x', query: 'refund', limit: 5 });
    expect((await tokenUsage(org, 'usr_x')).usage_by_agent.text).toBeGreaterThan(0); // metered
    expect(hits[0].excerpt).toContain('money back');
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
  });

  it('routes OCR and transcription through the gateway when the organization configures a model for them', async () => {
    const org = await funded(10_000, 'business');
    const who = { organization_id: org, user_id: 'usr_x' };
    // not configured: the local engines answer
    expect(
      (
        await recognize(
          Buffer.from(
            await (
              await import('sharp')
            )
              .default({ create: { width: 40, height: 20, channels: 3, background: '#fff' } })
              .png()
              .toBuffer(),
          ),
          visionModel(who),
        )
      ).engine,
    ).toBe('tesseract.js');
    await updateOrganizationConfig(
      org,
      'ticket_scan',
      { provider: 'openai', model: 'vision-x', max_tokens: 300 },
      'usr_admin',
    );
    await updateOrganizationConfig(org, 'transcription', { provider: 'openai', model: 'whisper-x' }, 'usr_admin');
    await new Promise((r) => setTimeout(r, 2100)); // the gateway's settings cache
    const ocr = await recognize(Buffer.from('png-bytes'), visionModel(who));
    expect(ocr).toMatchObject({ engine: 'llm:mock-model', text: expect.stringContaining('FRESH MART') });
    const heard = await transcribe(speak('i forgot my password'), await speechRoute(who));
    expect(heard).toMatchObject({ text: 'i forgot my password', engine: 'llm:whisper-x' });
    const usage = await tokenUsage(org, 'usr_x');
    expect(usage.usage_by_agent.ticket_scan).toBeGreaterThan(0);
    expect(usage.usage_by_agent.transcription).toBeGreaterThan(0);
  });
});
