/**
 * SPEECH_ENGINE=openai: audio goes to an OpenAI-compatible `audio/transcriptions` endpoint. The
 * provider is outside this machine, so a local HTTP server stands in for it (mocked provider
 * API). Also: no engine configured is a 500 that says so.
 */
import http from 'node:http';

import { afterAll, describe, expect, it } from 'vitest';

import { transcribe } from '../../activities/adapters/speech.ts';
import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { freePort } from '../../tools/infra.ts';
import { speak } from '../helpers/speech.ts';

const seen: Array<{ url?: string; type?: string; body: string }> = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({ url: req.url, type: req.headers['content-type'], body: Buffer.concat(chunks).toString('latin1') });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ text: 'I forgot my password.' }));
  });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('speech engines (mocked provider API)', () => {
  it('sends the upload to audio/transcriptions with the configured model', async () => {
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    setConfig(
      parseEnv({
        SPEECH_ENGINE: 'openai',
        SPEECH_MODEL: 'whisper-test',
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        OPENAI_API_KEY: 'sk-test',
      }),
    );
    const out = await transcribe(speak('i forgot my password'));
    expect(out).toMatchObject({ text: 'I forgot my password.', engine: 'openai:whisper-test', format: 'wav' });
    expect(out.duration).toBeGreaterThan(0.5);
    expect(seen[0].url).toBe('/v1/audio/transcriptions');
    expect(seen[0].type).toMatch(/^multipart\/form-data/);
    expect(seen[0].body).toContain('whisper-test');
    expect(seen[0].body).toContain('RIFF');
  });

  it('answers 500 "transcription engine not configured" without an engine', async () => {
    setConfig(parseEnv({ SPEECH_ENGINE: 'none' }));
    await expect(transcribe(speak('hello'))).rejects.toMatchObject({
      status: 500,
      message: 'transcription engine not configured',
    });
  });
});
