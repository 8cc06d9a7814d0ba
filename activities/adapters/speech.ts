/**
 * Speech to text. Audio of any accepted format is decoded by ffmpeg to 16 kHz mono PCM, measured
 * (duration, loudness) and transcribed by:
 * - `pocketsphinx`: offline, PocketSphinx with its bundled en-us model (PyPI `pocketsphinx`,
 *   installed by `npm run setup` under the platform cache), one warm helper process;
 * - `openai`: an OpenAI-compatible `audio/transcriptions` endpoint (OpenAI, whisper.cpp server,
 *   faster-whisper servers, LocalAI) at OPENAI_BASE_URL with SPEECH_MODEL.
 * SPEECH_ENGINE=auto takes pocketsphinx when installed. With none: 500 "transcription engine not
 * configured". Silence is refused, never transcribed into invented words.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import OpenAI, { toFile } from 'openai';

import { misconfigured, PlatformError, upstreamFailed } from '../core/errors.ts';
import { speechSettings } from './settings.ts';
import { AUDIO_DEMUXERS, sniff } from './sniff.ts';

/** A transcription model the caller routes through; null from it means the provider failed. */
export interface SpeechModel {
  transcribe(audio: Buffer, filename: string): Promise<{ value: string; model: string } | null>;
}

const SAMPLE_RATE = 16_000;
/** RMS of 16-bit samples under this (≈ −56 dBFS) is silence */
const SILENCE_RMS = 50;

interface DecodedAudio {
  pcm: Buffer;
  duration: number;
  format: string;
  rms: number;
}

function ffmpegPath(): string {
  const configured = speechSettings().FFMPEG_PATH;
  if (configured) return configured;
  try {
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@ffmpeg-installer/linux-x64/package.json'));
    return path.join(dir, 'ffmpeg');
  } catch {
    return 'ffmpeg';
  }
}

function run(
  cmd: string,
  args: string[],
  limit: number,
): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) out.push(c);
    });
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr }));
  });
}

/** 4xx for what the client sent: not audio, empty, unreadable, too long, silent. */
async function decodeAudio(body: Buffer): Promise<DecodedAudio> {
  if (!body.length) throw new PlatformError('invalid', 'file: the uploaded audio is empty', 'file');
  const kind = sniff(body);
  const demuxer = AUDIO_DEMUXERS[kind.format];
  if (!demuxer) throw new PlatformError('malformed', `Unsupported file type: ${kind.mime}`, 'file');
  const max = speechSettings().MAX_AUDIO_SECONDS;
  const limitBytes = Math.ceil((max + 1) * SAMPLE_RATE * 2);
  // A file, not a pipe: MP4/M4A keep their index at the end and need a seekable input.
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'speech-'));
  const input = path.join(dir, `audio.${kind.format}`);
  let res;
  try {
    await fs.promises.writeFile(input, body);
    // The sniffed demuxer only, and local files only: no playlist, script or URL is followed.
    res = await run(
      ffmpegPath(),
      [
        '-hide_banner',
        '-nostdin',
        '-protocol_whitelist',
        'file',
        '-f',
        demuxer,
        '-i',
        input,
        '-t',
        String(max + 1),
        '-vn',
        '-ac',
        '1',
        '-ar',
        String(SAMPLE_RATE),
        '-f',
        's16le',
        'pipe:1',
      ],
      limitBytes,
    );
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
  if (res.code !== 0 || !res.stdout.length) {
    const reason = (res.stderr.split('\n').filter(Boolean).at(-1) ?? 'unreadable').replaceAll(input, 'input');
    throw new PlatformError('invalid', `file: unreadable ${kind.format} audio (${reason.slice(0, 200)})`, 'file');
  }
  const pcm = res.stdout.subarray(0, res.stdout.length - (res.stdout.length % 2));
  const duration = pcm.length / 2 / SAMPLE_RATE;
  if (duration > max) throw new PlatformError('invalid', `file: the audio is longer than ${max} seconds`, 'file');
  if (duration < 0.1) throw new PlatformError('invalid', 'file: the audio is too short to contain speech', 'file');
  let sum = 0;
  for (let i = 0; i < pcm.length; i += 2) {
    const v = pcm.readInt16LE(i);
    sum += v * v;
  }
  const rms = Math.sqrt(sum / (pcm.length / 2));
  if (rms < SILENCE_RMS) throw new PlatformError('invalid', 'file: the audio is silent', 'file');
  return { pcm, duration: Math.round(duration * 1000) / 1000, format: kind.format, rms: Math.round(rms) };
}

// --- pocketsphinx helper process ---

function speechPythonDir(): string {
  const bin = speechSettings().PLATFORM_BIN_DIR || path.join(os.homedir(), '.cache', 'loyalty-platform', 'bin');
  return path.join(path.dirname(bin), 'python');
}

let installed: boolean | undefined;
function pocketsphinxInstalled(): boolean {
  installed ??=
    spawnSync('python3', ['-c', 'import pocketsphinx'], {
      env: { ...process.env, PYTHONPATH: speechPythonDir() },
      stdio: 'ignore',
    }).status === 0;
  return installed;
}

interface Helper {
  child: ChildProcess;
  ready: Promise<void>;
  pending: Array<{ resolve: (v: { text: string; ms: number }) => void; reject: (e: Error) => void }>;
}
let helper: Helper | undefined;
let queue: Promise<unknown> = Promise.resolve();

function startHelper(): Helper {
  const script = fileURLToPath(new URL('./pocketsphinx_server.py', import.meta.url));
  const child = spawn('python3', [script], {
    env: { ...process.env, PYTHONPATH: speechPythonDir() },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const h: Helper = { child, ready: Promise.resolve(), pending: [] };
  let buffered = '';
  let onReady: () => void;
  let onFail: (e: Error) => void;
  h.ready = new Promise<void>((res, rej) => ((onReady = res), (onFail = rej)));
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const msg = JSON.parse(line);
      if (msg.ready) onReady();
      else {
        const job = h.pending.shift();
        if (msg.error) job?.reject(new Error(`pocketsphinx: ${msg.error}`));
        else job?.resolve({ text: String(msg.text ?? ''), ms: Number(msg.ms ?? 0) });
      }
    }
  });
  child.on('exit', (code) => {
    const err = new Error(`pocketsphinx helper exited (${code}): ${stderr.trim().split('\n').at(-1) ?? ''}`);
    onFail(err);
    for (const job of h.pending.splice(0)) job.reject(err);
    if (helper === h) helper = undefined;
  });
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  (child.stdout as unknown as { unref?: () => void }).unref?.();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  return h;
}

async function withPocketsphinx(pcm: Buffer): Promise<{ text: string; engine: string }> {
  const run = queue.then(async () => {
    helper ??= startHelper();
    const h = helper;
    await h.ready;
    const head = Buffer.alloc(4);
    head.writeUInt32BE(pcm.length);
    const answer = new Promise<{ text: string; ms: number }>((resolve, reject) => h.pending.push({ resolve, reject }));
    h.child.stdin!.write(Buffer.concat([head, pcm]));
    return answer;
  });
  queue = run.catch(() => undefined);
  const out = await run;
  return { text: out.text, engine: 'pocketsphinx-en-us' };
}

async function withOpenAI(audio: Buffer, format: string): Promise<{ text: string; engine: string }> {
  const cfg = speechSettings();
  const client = new OpenAI({
    apiKey: cfg.OPENAI_API_KEY ?? 'not-needed',
    baseURL: cfg.OPENAI_BASE_URL,
    timeout: 120_000,
    maxRetries: 2,
  });
  const res = await client.audio.transcriptions.create({
    model: cfg.SPEECH_MODEL,
    file: await toFile(audio, `audio.${format === 'm4a' ? 'm4a' : format}`),
  });
  return { text: res.text ?? '', engine: `openai:${cfg.SPEECH_MODEL}` };
}

function speechEngine(): 'pocketsphinx' | 'openai' | null {
  const cfg = speechSettings();
  if (cfg.SPEECH_ENGINE === 'openai') return 'openai';
  if (cfg.SPEECH_ENGINE === 'none') return null;
  if (pocketsphinxInstalled()) return 'pocketsphinx';
  return null;
}

export interface Transcript {
  text: string;
  duration: number;
  engine: string;
  format: string;
  ms: number;
}

/**
 * With the caller known (`route`), its transcription agent's settings decide: its model (through
 * the LLM gateway, metered; PocketSphinx when the provider fails) or, with `model: null`,
 * PocketSphinx. Without a route (tools, tests) SPEECH_ENGINE does.
 */
export async function transcribe(body: Buffer, route?: { model: SpeechModel | null }): Promise<Transcript> {
  const engine = route ? (route.model ? 'gateway' : pocketsphinxInstalled() ? 'pocketsphinx' : null) : speechEngine();
  if (!engine) throw misconfigured('transcription engine not configured');
  const audio = await decodeAudio(body);
  const started = performance.now();
  let out: { text: string; engine: string } | null = null;
  if (engine === 'gateway') {
    const g = await route!.model!.transcribe(body, `audio.${audio.format}`);
    if (g) out = { text: g.value, engine: `llm:${g.model}` };
    else if (!pocketsphinxInstalled())
      throw upstreamFailed('the transcription provider failed and no local engine is installed');
  }
  out ??= engine === 'openai' ? await withOpenAI(body, audio.format) : await withPocketsphinx(audio.pcm);
  const text = out.text.replace(/\s+/g, ' ').trim();
  if (!text) throw new PlatformError('invalid', 'file: no speech was recognized in the audio', 'file');
  return {
    text,
    duration: audio.duration,
    engine: out.engine,
    format: audio.format,
    ms: Math.round(performance.now() - started),
  };
}

export function stopSpeech(): void {
  helper?.child.kill();
  helper = undefined;
}
