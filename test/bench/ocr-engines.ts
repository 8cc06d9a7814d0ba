/**
 * tesseract.js (warm worker, the default engine) against the `tesseract` binary (one process per
 * page, OMP_THREAD_LIMIT=1, --psm 6) on the same generated receipts: time and words right.
 * Run alone: `npx tsx test/bench/ocr-engines.ts`; the bench's retail section runs it when the
 * binary is installed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { recognize, stopOcr } from '../../activities/adapters/ocr.ts';
import { parseEnv, setConfig } from '../../activities/core/config.ts';
import { receiptLines, renderReceipt } from '../helpers/receipts.ts';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const words = (s: string) => s.toLowerCase().split(/\s+/).filter(Boolean);

function wordAccuracy(expected: string, got: string): number {
  const have = new Map<string, number>();
  for (const w of words(got)) have.set(w, (have.get(w) ?? 0) + 1);
  let hit = 0;
  const want = words(expected);
  for (const w of want) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      hit += 1;
      have.set(w, n - 1);
    }
  }
  return hit / want.length;
}

export async function compareOcrEngines(count = 10): Promise<string[]> {
  if (spawnSync('tesseract', ['--version']).status !== 0)
    return ['OCR engines: the tesseract binary is not installed; only tesseract.js was measured'];
  setConfig(parseEnv({ ...process.env, OCR_ENGINE: 'tesseract' }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ocr-bench-'));
  const pages: Array<{ file: string; buf: Buffer; text: string }> = [];
  for (let i = 0; i < count; i += 1) {
    const spec = {
      merchant: 'Bench Market',
      address: `${i + 1} Scan Avenue, Testville`,
      date: `2026-03-${String(i + 1).padStart(2, '0')}`,
      items: [
        { name: 'Whole Milk 1L', price: 1.25 },
        { name: 'Sourdough Bread', qty: 2, price: 6.98 },
        { name: 'Green Tea 20 bags', price: 2.1 + i / 100 },
      ],
    };
    const buf = await renderReceipt(spec);
    const file = path.join(dir, `r${i}.png`);
    fs.writeFileSync(file, buf);
    pages.push({ file, buf, text: receiptLines(spec).join('\n') });
  }
  await recognize(pages[0].buf); // warm-up: the worker loads the model once
  const js: number[] = [];
  const bin: number[] = [];
  let jsAcc = 0;
  let binAcc = 0;
  for (const p of pages) {
    let t = performance.now();
    const a = await recognize(p.buf);
    js.push(performance.now() - t);
    jsAcc += wordAccuracy(p.text, a.text);
    t = performance.now();
    const b = execFileSync('tesseract', [p.file, 'stdout', '--psm', '6', '-l', 'eng'], {
      env: { ...process.env, OMP_THREAD_LIMIT: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    bin.push(performance.now() - t);
    binAcc += wordAccuracy(p.text, b);
  }
  await stopOcr();
  fs.rmSync(dir, { recursive: true, force: true });
  const version = execFileSync('tesseract', ['--version']).toString().split('\n')[0];
  return [
    `OCR engines on ${count} generated receipts (same pages):`,
    `| engine | p50 ms | p99 ms | words right |`,
    `|---|---:|---:|---:|`,
    `| tesseract.js (warm worker thread, default) | ${pct(js, 50).toFixed(0)} | ${pct(js, 99).toFixed(0)} | ${((jsAcc / count) * 100).toFixed(1)}% |`,
    `| ${version} binary, one process per page, OMP_THREAD_LIMIT=1 | ${pct(bin, 50).toFixed(0)} | ${pct(bin, 99).toFixed(0)} | ${((binAcc / count) * 100).toFixed(1)}% |`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  void compareOcrEngines().then((lines) => process.stdout.write(`${lines.join('\n')}\n`));
}
