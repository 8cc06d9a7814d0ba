/**
 * The supervisor on real processes: one killed with SIGKILL is started again (new pid) after the
 * first backoff and both events are logged; one that keeps failing at start is given up after the
 * allowed short runs, with the reason; a stopped one is not restarted.
 */
import { spawn } from 'node:child_process';

import { afterEach, describe, expect, it } from 'vitest';

import { FIRST_DELAY_MS, supervise, type Supervised } from '../../tools/supervise.ts';

const running: Supervised[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop(2000)));
});

const until = async (what: string, ok: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('supervise', () => {
  it('restarts a process killed with SIGKILL after the first backoff, and logs both', async () => {
    const lines: string[] = [];
    const s = supervise({ name: 'sleeper', spawn: () => spawn('sleep', ['60']), log: (l) => lines.push(l) });
    running.push(s);
    const first = s.current().pid!;
    await until('the first run', () => s.current().pid !== undefined);
    const killedAt = Date.now();
    process.kill(first, 'SIGKILL');
    await until('a restart', () => s.current().pid !== first);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(FIRST_DELAY_MS - 20);
    const second = s.current().pid!;
    expect(lines[0]).toMatch(
      new RegExp(`^sleeper \\(pid ${first}\\) exited \\(SIGKILL\\) after [0-9.]+ s; restarting in 0.5 s$`),
    );
    expect(lines[1]).toBe(`sleeper restarted (pid ${second})`);
    // The backoff doubles for a run that did not last a minute.
    process.kill(second, 'SIGKILL');
    await until('the second exit', () => lines.length >= 3);
    expect(lines[2]).toMatch(/restarting in 1 s$/);
  });

  it('gives up a process that keeps failing at start, saying why', async () => {
    const lines: string[] = [];
    let gaveUp: string | undefined;
    let runs = 0;
    const s = supervise({
      name: 'broken server',
      spawn: () => {
        runs += 1;
        return spawn('bash', ['-c', 'exit 3']);
      },
      log: (l) => lines.push(l),
      maxShortRuns: 2,
      hint: '/tmp/broken.log',
      onGiveUp: (reason) => {
        gaveUp = reason;
      },
    });
    running.push(s);
    await until('giving up', () => gaveUp !== undefined);
    expect(runs).toBe(3);
    expect(gaveUp).toBe(
      'broken server exited (code 3) 3 times in a row within a minute of starting; not restarting it (see /tmp/broken.log)',
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(runs).toBe(3);
  });

  it('restarts nothing once stopped', async () => {
    const lines: string[] = [];
    const s = supervise({ name: 'sleeper', spawn: () => spawn('sleep', ['60']), log: (l) => lines.push(l) });
    const child = s.current();
    await s.stop(2000);
    expect(child.signalCode).toBe('SIGTERM');
    await new Promise((r) => setTimeout(r, FIRST_DELAY_MS + 200));
    expect(s.current()).toBe(child);
    expect(lines).toEqual([]);
  });
});
