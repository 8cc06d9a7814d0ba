/**
 * Documents part of `npm run bench`: first-page thumbnail latency of the platform's renderer
 * (pdfjs-dist + @napi-rs/canvas, warm, in process) against `pdftoppm` (poppler-utils, one
 * process per page, when installed) on the same PDFs; documents per minute through
 * /process_document with 2 requests in flight; the worker's peak memory.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { readPdf, renderPage, withPdf } from '../../activities/adapters/pdf.ts';
import { pdfWithText } from '../helpers/documents.ts';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

function rssOf(pattern: string): number {
  // The worker process's resident memory (kB → MiB), found by its command line.
  const out = spawnSync('ps', ['-eo', 'rss,args'], { encoding: 'utf8' }).stdout.split('\n');
  return Math.max(0, ...out.filter((l) => l.includes(pattern)).map((l) => Number(l.trim().split(/\s+/)[0]) / 1024));
}

export async function benchDocuments(base: string, adminKey: string): Promise<string[]> {
  const lines: string[] = [];
  const pdfs = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      pdfWithText([`INVOICE ${i}`, 'Bill to: Ana Lopez', 'Amount due: $120.00', 'Due date: 2026-12-01'], {
        pages: 1 + (i % 5),
        title: `Invoice ${i}`,
        image: true,
      }),
    ),
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-bench-'));
  pdfs.forEach((b, i) => fs.writeFileSync(path.join(dir, `d${i}.pdf`), b));
  await withPdf(pdfs[0], (pdf) => renderPage(pdf, 1, 256)); // warm-up
  const ours: number[] = [];
  const poppler: number[] = [];
  const hasPoppler = spawnSync('pdftoppm', ['-v']).status === 0;
  for (let round = 0; round < 3; round += 1) {
    for (let i = 0; i < pdfs.length; i += 1) {
      let t = performance.now();
      await withPdf(pdfs[i], async (pdf) => {
        await readPdf(pdf);
        return renderPage(pdf, 1, 256);
      });
      ours.push(performance.now() - t);
      if (hasPoppler) {
        t = performance.now();
        execFileSync('pdftoppm', [
          '-f',
          '1',
          '-l',
          '1',
          '-scale-to',
          '256',
          '-jpeg',
          path.join(dir, `d${i}.pdf`),
          path.join(dir, `out${i}`),
        ]);
        poppler.push(performance.now() - t);
      }
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  lines.push('First-page thumbnail, 256 px JPEG, 10 generated PDFs × 3 rounds');
  lines.push('| renderer | p50 ms | p99 ms |');
  lines.push('|---|---:|---:|');
  lines.push(
    `| pdfjs-dist + @napi-rs/canvas, in process (open, text of all pages, render page 1) | ${pct(ours, 50).toFixed(1)} | ${pct(ours, 99).toFixed(1)} |`,
  );
  if (hasPoppler) {
    lines.push(
      `| pdftoppm (poppler-utils), a process per PDF | ${pct(poppler, 50).toFixed(1)} | ${pct(poppler, 99).toFixed(1)} |`,
    );
    lines.push(`| ratio (p50, ours / pdftoppm) | ${(pct(ours, 50) / pct(poppler, 50)).toFixed(2)}× | |`);
  } else lines.push('| pdftoppm | not installed | |');

  // Throughput: 40 documents through the whole pipeline, 2 in flight.
  const user = 'bench-docs';
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const conversation_id = (
    (await (
      await fetch(`${base}/initialize_session`, { method: 'POST', headers, body: JSON.stringify({ user_id: user }) })
    ).json()) as any
  ).conversation_id;
  const N = Number(process.env.BENCH_DOCUMENTS ?? 40);
  let next = 0;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf('workers/worker.ts'))), 100);
  const t0 = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      while (next < N) {
        const i = next++;
        const form = new FormData();
        for (const [k, v] of Object.entries({ user_id: user, session_id: 's', conversation_id })) form.append(k, v);
        form.append('file', new Blob([pdfs[i % pdfs.length]], { type: 'application/pdf' }), `doc${i}.pdf`);
        const res = await fetch(`${base}/process_document`, {
          method: 'POST',
          headers: { authorization: headers.authorization },
          body: form,
        });
        if (res.status !== 200) throw new Error(`process_document answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  clearInterval(sampler);
  const minutes = (performance.now() - t0) / 60_000;
  lines.push(
    `/process_document: ${N} PDFs (1-5 pages) with 2 in flight: ${(N / minutes).toFixed(0)} documents per minute; worker peak RSS ${peak.toFixed(0)} MiB`,
  );
  return lines;
}
