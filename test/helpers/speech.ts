/**
 * Known sentences spoken by a speech synthesizer (meSpeak: eSpeak compiled to JavaScript, from
 * npm, so nothing is installed system-wide) and converted to other formats with the platform's
 * ffmpeg; word error rate of a transcript against the sentence.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
let mespeak: any;

export function speak(text: string): Buffer {
  if (!mespeak) {
    mespeak = require('mespeak');
    mespeak.loadConfig(require('mespeak/src/mespeak_config.json'));
    mespeak.loadVoice(require('mespeak/voices/en/en-us.json'));
  }
  // A slower female variant is what the offline recognizer follows best (measured).
  return Buffer.from(mespeak.speak(text, { rawdata: 'buffer', speed: 130, wordgap: 1, variant: 'f2' }));
}

export const ffmpeg = () =>
  path.join(path.dirname(require.resolve('@ffmpeg-installer/linux-x64/package.json')), 'ffmpeg');

/** Converts audio with ffmpeg (codec args per format) through temp files. */
export function convert(
  input: Buffer,
  ext: 'mp3' | 'ogg' | 'webm' | 'm4a' | 'flac' | 'wav',
  extra: string[] = [],
): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audio-'));
  const src = path.join(dir, 'in.wav');
  const dst = path.join(dir, `out.${ext}`);
  fs.writeFileSync(src, input);
  const codec: Record<string, string[]> = {
    mp3: ['-c:a', 'libmp3lame'],
    ogg: ['-c:a', 'libopus'],
    webm: ['-c:a', 'libopus'],
    m4a: ['-c:a', 'aac'],
    flac: ['-c:a', 'flac'],
    wav: [],
  };
  execFileSync(ffmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-i', src, ...codec[ext], ...extra, dst]);
  const out = fs.readFileSync(dst);
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

/** A tone (or silence with frequency 0) of the given length, as WAV. */
export function tone(seconds: number, frequency: number, ext: 'wav' | 'ogg' = 'wav'): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tone-'));
  const dst = path.join(dir, `t.${ext}`);
  const source = frequency > 0 ? `sine=frequency=${frequency}:duration=${seconds}` : `anullsrc=r=16000:cl=mono`;
  execFileSync(ffmpeg(), [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    source,
    '-t',
    String(seconds),
    ...(ext === 'ogg' ? ['-c:a', 'libopus'] : []),
    dst,
  ]);
  const out = fs.readFileSync(dst);
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** Word error rate: word-level edit distance over the reference's length. */
export function wer(reference: string, hypothesis: string): number {
  const r = words(reference);
  const h = words(hypothesis);
  const d = Array.from({ length: r.length + 1 }, (_, i) =>
    Array.from({ length: h.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= r.length; i += 1) {
    for (let j = 1; j <= h.length; j += 1) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1));
    }
  }
  return d[r.length][h.length] / r.length;
}
