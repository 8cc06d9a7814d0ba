/**
 * The worker's PDF reader (activities/adapters/pdf.ts, pdfInChild) in this process, with its real
 * child processes: a read whose caller gave up (activity cancelled, deadline passed) is dropped
 * from the queue or killed while running, one owner holds at most one reader, and the queue is
 * bounded (503 with Retry-After past it).
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { describe, expect, it } from 'vitest';

import { pdfInChild, type PdfJob } from '../../activities/adapters/pdf.ts';
import { config } from '../../activities/core/config.ts';
import { pdfWithText } from '../helpers/documents.ts';
import { slowPdf } from '../helpers/pdf-bombs.ts';

const JOB: PdfJob = { text: true, thumbnail: 64 };
/** ~12 s of reading alone (more on a loaded machine): every test gives up on it long before. */
const SLOW = slowPdf(200_000);

/** This process's PDF reader children. */
function readerPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        return (
          new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status) &&
          !/^State:\s+Z/m.test(status) &&
          fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('pdf-child.mjs')
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function waitFor(what: string, ok: () => boolean, ms: number) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** How a read ended, and when (ms after `t0`). */
const settled = (p: Promise<unknown>, t0 = Date.now()) =>
  p.then(
    () => ({ ok: true as const, ms: Date.now() - t0, err: undefined }),
    (err: Error & { status?: number; headers?: Record<string, string> }) => ({
      ok: false as const,
      ms: Date.now() - t0,
      err,
    }),
  );

let n = 0;
const owner = () => `org/usr-${process.pid}-${(n += 1)}`;

describe('PDF reader queue', () => {
  it('kills a running read at once when its caller gives up (activity cancelled), and the next read gets a fresh reader', async () => {
    const who = owner();
    const ac = new AbortController();
    const running = settled(pdfInChild(SLOW, JOB, { owner: who, signal: ac.signal }));
    await waitFor('a reader child', () => readerPids().length > 0, 10_000);
    await sleep(1500); // well into the reading
    const t0 = Date.now();
    ac.abort(new Error('activity cancelled'));
    const out = await running;
    expect(out.ok).toBe(false);
    expect(out.err?.message).toBe('activity cancelled');
    expect(Date.now() - t0).toBeLessThan(1000);
    await waitFor('the busy reader to be killed', () => readerPids().length === 0, 2000);
    const next = await pdfInChild(await pdfWithText(['Invoice number 7']), JOB, { owner: who });
    expect(next.info?.text).toContain('Invoice number 7');
  });

  it('drops a waiting read whose caller gave up: it is never read, and the read queued after it goes first', async () => {
    const who = owner();
    const first = new AbortController();
    const second = new AbortController();
    const running = settled(pdfInChild(SLOW, JOB, { owner: who, signal: first.signal }));
    // the same owner: this one waits for the first
    const waiting = settled(pdfInChild(SLOW, JOB, { owner: who, signal: second.signal }));
    await sleep(500);
    const t0 = Date.now();
    second.abort(new Error('activity cancelled'));
    const dropped = await waiting;
    expect(dropped.ok).toBe(false);
    expect(dropped.err?.message).toBe('activity cancelled');
    expect(Date.now() - t0).toBeLessThan(500);
    const third = settled(pdfInChild(await pdfWithText(['Receipt total 12.50']), JOB, { owner: who }));
    first.abort(new Error('activity cancelled'));
    expect((await running).ok).toBe(false);
    // the dropped slow read does not run in between: the third is read within seconds, not ~12 s
    const t1 = Date.now();
    const out = await third;
    expect(out.ok, String(out.err)).toBe(true);
    expect(Date.now() - t1).toBeLessThan(6000);
  });

  it('drops a read whose deadline passes while it waits, and kills one whose deadline passes while it is read', async () => {
    const who = owner();
    const holder = new AbortController();
    const t0 = Date.now();
    const running = settled(pdfInChild(SLOW, JOB, { owner: who, deadline: Date.now() + 4000 }), t0);
    const waiting = settled(
      pdfInChild(await pdfWithText(['Hello']), JOB, { owner: who, deadline: Date.now() + 1000, signal: holder.signal }),
      t0,
    );
    const late = await waiting;
    expect(late.ok).toBe(false);
    expect(late.err?.message).toMatch(/deadline/);
    expect(late.ms).toBeLessThan(2000);
    const killed = await running;
    expect(killed.ok).toBe(false);
    expect(killed.err?.message).toMatch(/deadline/);
    // not a refusal of the file (422): its caller had gone
    expect(killed.err?.status).toBeUndefined();
    expect(killed.ms).toBeGreaterThan(3500);
    expect(killed.ms).toBeLessThan(6000);
    await waitFor('the reader to be killed', () => readerPids().length === 0, 2000);
  });

  it('holds one reader per owner and refuses past its bounds with 503 and Retry-After, at once', async () => {
    const stop = new AbortController();
    const mine = owner();
    const reads: Promise<unknown>[] = [];
    const read = (pdf: Buffer, who: string) => {
      const p = pdfInChild(pdf, JOB, { owner: who, signal: stop.signal });
      reads.push(p.catch(() => undefined));
      return settled(p);
    };
    try {
      void read(SLOW, mine); // settled through `reads` below
      void read(SLOW, mine);
      // a third PDF of the same owner: refused (one reading, one waiting is the owner's share)
      const third = await read(SLOW, mine);
      expect(third.ok).toBe(false);
      expect(third.err?.status).toBe(503);
      expect(third.err?.headers?.['Retry-After']).toMatch(/^[1-9]\d*$/);
      expect(third.ms).toBeLessThan(200);
      // another owner is read meanwhile, by another reader
      const other = await read(await pdfWithText(['Another user']), owner());
      expect(other.ok, String(other.err)).toBe(true);
      expect(other.ms).toBeLessThan(8000);
      // both readers busy: PDF_QUEUE_MAX PDFs of other owners wait, the next is refused
      void read(SLOW, owner());
      const small = await pdfWithText(['Waiting']);
      for (let i = 0; i < config().PDF_QUEUE_MAX - 1; i += 1) void read(small, owner()); // mine's second already waits
      const full = await read(small, owner());
      expect(full.ok).toBe(false);
      expect(full.err?.status).toBe(503);
      expect(full.err?.headers?.['Retry-After']).toMatch(/^[1-9]\d*$/);
    } finally {
      stop.abort(new Error('test over'));
      await Promise.all(reads);
    }
  });
});
