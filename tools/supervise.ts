/**
 * Keeps one platform process running: when it exits on its own it is started again after a
 * backoff (0.5 s doubling to 30 s; a run that lasted a minute resets it), and each exit and
 * restart is logged. Servers give up after a few runs in a row that did not last (the platform
 * then stops, saying why); workers and the edge are restarted for as long as the platform runs.
 * startServer runs a server this way, under guard.sh, with its output in a log file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** runs a command that ends when this process goes away, even by SIGKILL */
export const GUARD = fileURLToPath(new URL('./guard.sh', import.meta.url));

export const FIRST_DELAY_MS = 500;
export const MAX_DELAY_MS = 30_000;
/** a run that lasted this long counts as healthy: the next crash restarts after FIRST_DELAY_MS */
export const STABLE_MS = 60_000;

export interface SuperviseOptions {
  name: string;
  /** starts one run of the process */
  spawn(): ChildProcess;
  /** resolves once a restarted run serves again (servers); rejects if it does not */
  ready?(child: ChildProcess): Promise<void>;
  log(line: string): void;
  /** runs in a row that ended within STABLE_MS after which it is given up (default: never) */
  maxShortRuns?: number;
  /** what to read when it fails (a log file) */
  hint?: string;
  onGiveUp?(reason: string): void;
  /** told of every exit that was not asked for */
  onExit?(code: number | null, signal: NodeJS.Signals | null): void;
}

export interface Supervised {
  readonly name: string;
  current(): ChildProcess;
  /** ends the process (SIGTERM, then SIGKILL after timeoutMs) and restarts nothing any more */
  stop(timeoutMs?: number): Promise<void>;
}

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

export function supervise(opts: SuperviseOptions): Supervised {
  let child: ChildProcess;
  let startedAt = 0;
  let delay = FIRST_DELAY_MS;
  let shortRuns = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const run = (restart: boolean) => {
    child = opts.spawn();
    startedAt = Date.now();
    const mine = child;
    mine.on('exit', (code, signal) => onExit(mine, code, signal));
    // A failed spawn (ENOENT…) also emits 'exit' or 'error'; 'error' alone must not crash the supervisor.
    mine.on('error', (err) => opts.log(`${opts.name}: ${err.message}`));
    if (!restart) return;
    if (!opts.ready) {
      opts.log(`${opts.name} restarted (pid ${mine.pid})`);
      return;
    }
    opts.ready(mine).then(
      () => {
        if (!stopped && running(mine)) opts.log(`${opts.name} is back (pid ${mine.pid})`);
      },
      (err: Error) => {
        if (stopped || !running(mine)) return;
        opts.log(`${opts.name} (pid ${mine.pid}) did not become ready: ${err.message}; ending it`);
        mine.kill('SIGKILL');
      },
    );
  };

  const onExit = (which: ChildProcess, code: number | null, signal: NodeJS.Signals | null) => {
    if (stopped || which !== child) return;
    opts.onExit?.(code, signal);
    const lasted = Date.now() - startedAt;
    if (lasted >= STABLE_MS) {
      delay = FIRST_DELAY_MS;
      shortRuns = 0;
    }
    shortRuns += lasted < STABLE_MS ? 1 : 0;
    const why = signal ?? `code ${code}`;
    if (opts.maxShortRuns !== undefined && shortRuns > opts.maxShortRuns) {
      const reason = `${opts.name} exited (${why}) ${shortRuns} times in a row within a minute of starting; not restarting it${opts.hint ? ` (see ${opts.hint})` : ''}`;
      opts.log(reason);
      stopped = true;
      opts.onGiveUp?.(reason);
      return;
    }
    opts.log(
      `${opts.name} (pid ${which.pid}) exited (${why}) after ${(lasted / 1000).toFixed(1)} s; restarting in ${delay / 1000} s`,
    );
    timer = setTimeout(() => {
      timer = undefined;
      if (!stopped) run(true);
    }, delay);
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  };

  run(false);

  return {
    name: opts.name,
    current: () => child,
    async stop(timeoutMs = 15_000) {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (!running(child)) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(kill);
    },
  };
}

/** server runs in a row that end within a minute before the server is given up */
const SERVER_SHORT_RUNS = 4;

/** Resolves once `check` says yes; fails when the process exits first or after timeoutMs. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  child: ChildProcess,
  logFile: string,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!running(child)) {
      const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2000) : '';
      throw new Error(
        `${what} exited (${child.signalCode ?? `code ${child.exitCode}`}) before it was ready. Log ${logFile}:\n${tail}`,
      );
    }
    try {
      if (await check()) return;
    } catch {
      /* not ready yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} was not ready after ${timeoutMs / 1000} s (log: ${logFile})`);
}

export interface ServerSpec {
  name: string;
  /** log file name under DATA_DIR/logs */
  file: string;
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** true once the server answers */
  check: () => Promise<boolean>;
  timeoutMs?: number;
}

/** Starts a server under guard.sh and supervision; `ready` settles when its first run answers. */
export function startServer(
  spec: ServerSpec,
  logDir: string,
  log: (line: string) => void,
  onGiveUp: (reason: string) => void,
): { server: Supervised; ready: Promise<void> } {
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `${spec.file}.log`);
  const server = supervise({
    name: spec.name,
    log: (line) => log(`infra: ${line}`),
    hint: logFile,
    maxShortRuns: SERVER_SHORT_RUNS,
    onGiveUp,
    spawn: () => {
      const out = fs.openSync(logFile, 'a');
      try {
        // Own process group: a Ctrl-C in the terminal reaches the supervisor only, which stops
        // the servers last, after the workers have finished what they were doing.
        return spawn('bash', [GUARD, String(process.pid), spec.cmd, ...spec.args], {
          stdio: ['ignore', out, out],
          env: { ...process.env, ...spec.env },
          detached: true,
        });
      } finally {
        fs.closeSync(out);
      }
    },
    ready: (child) => waitFor(spec.name, spec.check, child, logFile, spec.timeoutMs),
  });
  return { server, ready: waitFor(spec.name, spec.check, server.current(), logFile, spec.timeoutMs) };
}
