import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { basicUser, call, fileForm, newTenant, type Tenant } from '../helpers/api.ts';
import { convert, speak, tone, wer } from '../helpers/speech.ts';

const SENTENCES = [
  'i forgot my password and cannot sign in',
  'please tell me how i can get a refund for my order',
  'when do my reward points expire',
  'how long does delivery take',
];

let t: Tenant;
let user: { key: string; user_id: string; idp_id: string };
let conversation_id: string;

beforeAll(async () => {
  t = await newTenant();
  for (const a of [
    {
      title: 'Resetting your password',
      body: 'If you forgot your password, tap Forgot password on the sign-in screen. We email you a reset link.',
    },
    { title: 'Refund policy', body: 'You can request a refund within 30 days of purchase.' },
    { title: 'How loyalty points expire', body: 'Points expire 12 months after they are earned.' },
  ]) {
    await call('POST', '/support/knowledge', { key: t.adminKey, json: a });
  }
  user = await basicUser(t);
  conversation_id = (await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } })).body
    .conversation_id;
});

const send = (data: Buffer, name: string, conv = conversation_id) =>
  call('POST', '/support/transcribe', {
    key: user.key,
    form: fileForm({ user_id: user.user_id, conversation_id: conv }, { data, name }),
  });

describe('audio transcription + answer (workflow audio-qa)', () => {
  it('transcribes generated speech offline (word error rate reported) and answers it from the knowledge base', async () => {
    const rates: number[] = [];
    for (const sentence of SENTENCES) {
      const res = await send(speak(sentence), 'question.wav');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        file_path: expect.stringContaining(`/${user.user_id}/originals/`),
        metadata: { engine: 'pocketsphinx-en-us', format: 'wav' },
      });
      expect(res.body.duration).toBeGreaterThan(1);
      expect(res.body.duration).toBeLessThan(6);
      expect(res.body.qa_response).toMatchObject({ success: true, metadata: { source_agent: 'local_retrieval' } });
      rates.push(wer(sentence, res.body.text));
      process.stderr.write(
        `speech: "${sentence}" → "${res.body.text}" (WER ${wer(sentence, res.body.text).toFixed(2)})\n`,
      );
    }
    const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
    process.stderr.write(
      `speech: mean WER ${mean.toFixed(2)} over ${rates.length} synthesized sentences (pocketsphinx en-us)\n`,
    );
    // A loose bound: synthetic speech and a small offline model; the figures are in docs/components/support.md.
    expect(mean).toBeLessThan(0.75);
    const password = await send(speak(SENTENCES[0]), 'again.wav');
    expect(password.body.text).toContain('password');
    expect(password.body.qa_response.metadata.citations[0].title).toBe('Resetting your password');
  });

  it.each(['mp3', 'ogg', 'webm', 'm4a', 'flac'] as const)('reads %s audio', async (ext) => {
    const res = await send(convert(speak(SENTENCES[0]), ext), `question.${ext}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.metadata.format).toBe(ext);
    expect(res.body.text).toContain('password');
  });

  it('refuses silence, empty, not-audio and too-long uploads, and other users’ conversations, with 4xx', async () => {
    const silent = await send(tone(3, 0), 'silence.wav');
    expect(silent.status).toBe(422);
    expect(silent.body.detail).toBe('file: the audio is silent');
    const empty = await send(Buffer.alloc(0), 'empty.wav');
    expect(empty.status).toBe(422);
    const text = await send(Buffer.from('this is not audio at all'), 'notes.wav');
    expect(text.status).toBe(400);
    expect(text.body.detail).toBe('Unsupported file type: text/plain');
    const long = await send(tone(61, 440, 'ogg'), 'long.ogg');
    expect(long.status).toBe(422);
    expect(long.body.detail).toBe('file: the audio is longer than 60 seconds');
    const corrupt = await send(
      Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt '), Buffer.alloc(64, 7)]),
      'broken.wav',
    );
    expect(corrupt.status).toBe(422);
    const other = await basicUser(t);
    const theirs = (await call('POST', '/initialize_session', { key: other.key, json: { user_id: other.user_id } }))
      .body.conversation_id;
    const refused = await send(speak(SENTENCES[0]), 'q.wav', theirs);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ detail: `Invalid conversation ID: ${theirs}` });
  });
});

describe('what the decoder may read', () => {
  // An empty ID3v2 tag: decoders skip it and look at what follows.
  const behindId3 = (inner: Buffer) => Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]), inner]);

  it('decodes only with the sniffed format: a playlist or another container behind an ID3 tag is refused and nothing it names is read', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'not-yours-'));
    const secret = path.join(dir, 'recording.wav');
    fs.writeFileSync(secret, speak(SENTENCES[1]));
    let requests = 0;
    const server = http.createServer((_req, res) => ((requests += 1), res.end('x')));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      for (const entry of [secret, `file://${secret}`, `http://127.0.0.1:${port}/segment.ts`, 'file:///etc/passwd']) {
        const playlist = Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${entry}\n#EXT-X-ENDLIST\n`);
        const res = await send(behindId3(playlist), 'question.mp3');
        expect(res.status, `${entry}: ${JSON.stringify(res.body)}`).toBe(422);
        expect(res.body.detail).toMatch(/^file: unreadable mp3 audio/);
        expect(res.body.detail).not.toContain(os.tmpdir());
      }
      const script = await send(behindId3(Buffer.from(`ffconcat version 1.0\nfile '${secret}'\n`)), 'question.mp3');
      expect(script.status).toBe(422);
      // A WAV file dressed as MP3 is read as MP3, not as whatever ffmpeg would find inside.
      const wav = await send(behindId3(speak(SENTENCES[0])), 'question.mp3');
      expect(wav.status, JSON.stringify(wav.body)).toBe(422);
      expect(requests).toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('still reads MP3 and FLAC behind an ID3 tag, each as itself', async () => {
    for (const ext of ['mp3', 'flac'] as const) {
      const res = await send(behindId3(convert(speak(SENTENCES[0]), ext)), `tagged.${ext}`);
      expect(res.status, `${ext}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.metadata.format).toBe(ext);
    }
  });
});
