/**
 * Runs the text analysis in a thread of its own (analysis-thread.mjs), one text at a time: the
 * worker's event loop keeps answering workflow tasks meanwhile, and a text that outlives its time
 * budget is stopped by ending the thread (a fresh one takes the next text).
 */
import { Worker } from 'node:worker_threads';

import { PlatformError } from '../core/errors.ts';
import type { analyse } from './analysis.ts';

export type Analysis = ReturnType<typeof analyse>;

/**
 * Every pattern is linear, so 500,000 characters take well under a second; the budget only
 * matters when something regresses or the machine is starved.
 */
const ANALYSIS_BUDGET_MS = 5000;

type Reply = { analysis: Analysis; vector?: number[]; error?: undefined } | { error: string };

class AnalysisThread {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private settle?: (reply: Reply | Error) => void;

  constructor(private readonly onEnd: (t: AnalysisThread) => void) {
    this.worker = new Worker(new URL('./analysis-thread.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    let started: (() => void) | undefined;
    let failed: ((err: Error) => void) | undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    this.worker.on('message', (msg: Reply | 'ready') => (msg === 'ready' ? started!() : this.settle?.(msg)));
    this.worker.on('error', (err) => {
      failed!(err);
      this.settle?.(err);
    });
    this.worker.on('exit', (code) => {
      this.onEnd(this);
      const err = new Error(`text analysis thread exited with code ${code}`);
      failed!(err);
      this.settle?.(err);
    });
  }

  run(text: string, embed: boolean, budgetMs: number): Promise<{ analysis: Analysis; vector?: number[] }> {
    this.worker.ref();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle = undefined;
        this.end();
        reject(
          new PlatformError(
            'unavailable',
            `text: the analysis took longer than ${budgetMs / 1000} s and was stopped; try again later or send a shorter text`,
            'text',
          ),
        );
      }, budgetMs);
      this.settle = (reply) => {
        clearTimeout(timer);
        this.settle = undefined;
        this.worker.unref(); // an idle thread does not keep the worker process alive
        if (reply instanceof Error) reject(reply);
        else if (reply.error !== undefined) reject(new Error(`text analysis failed: ${reply.error}`));
        else resolve(reply);
      };
      this.worker.postMessage({ text, embed });
    });
  }

  end(): void {
    this.onEnd(this);
    void this.worker.terminate();
  }
}

let thread: AnalysisThread | undefined;
let queue: Promise<unknown> = Promise.resolve();

const forget = (t: AnalysisThread) => {
  if (thread === t) thread = undefined;
};

/**
 * The analysis of a text and, with `embed`, its local hashed embedding. Texts wait their turn; the
 * budget counts from the moment this text's analysis starts (not the queue, not the thread's start).
 * Over the budget: 503.
 */
export function analyseOffThread(
  text: string,
  options: { embed: boolean; budgetMs?: number },
): Promise<{ analysis: Analysis; vector?: number[] }> {
  const job = async () => {
    thread ??= new AnalysisThread(forget);
    const t = thread;
    await t.ready;
    return t.run(text, options.embed, options.budgetMs ?? ANALYSIS_BUDGET_MS);
  };
  const result = queue.then(job, job);
  queue = result.catch(() => undefined);
  return result;
}

/** Ends the thread (tests, shutdown); the next analysis starts a new one. */
export function stopAnalysisThread(): void {
  thread?.end();
}
