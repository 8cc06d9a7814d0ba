/**
 * OCR_ENGINE=openai: the receipt page goes to an OpenAI-compatible chat completions endpoint as
 * an image. The provider is outside this machine, so a local HTTP server stands in for it
 * (mocked provider API); the test checks the request the platform sends and the answer it reads.
 */
import http from 'node:http';

import { afterAll, describe, expect, it } from 'vitest';

import { recognize } from '../../activities/adapters/ocr.ts';
import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { freePort } from '../../tools/infra.ts';

const received: any[] = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({
      url: req.url,
      auth: req.headers.authorization,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 0,
        model: 'vision-test',
        choices: [
          {
            index: 0,
            finish_reason: 'stop',
            message: { role: 'assistant', content: 'FRESH MART\nWhole Milk 1L   1.25\nTOTAL   1.25' },
          },
        ],
      }),
    );
  });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('vision-model OCR engine (mocked provider API)', () => {
  it('sends the page as an image to the configured model and labels the result with it', async () => {
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    setConfig(
      parseEnv({
        OCR_ENGINE: 'openai',
        OCR_MODEL: 'vision-test',
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        OPENAI_API_KEY: 'sk-test',
      }),
    );
    const out = await recognize(Buffer.from('page-bytes'));
    expect(out).toMatchObject({
      text: 'FRESH MART\nWhole Milk 1L   1.25\nTOTAL   1.25',
      engine: 'openai:vision-test',
      confidence: null,
    });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      url: '/v1/chat/completions',
      auth: 'Bearer sk-test',
      body: { model: 'vision-test', temperature: 0 },
    });
    const image = received[0].body.messages[1].content[0].image_url.url as string;
    expect(image).toBe(`data:image/png;base64,${Buffer.from('page-bytes').toString('base64')}`);
  });
});
