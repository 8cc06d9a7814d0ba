/**
 * Work a component finishes after its caller's answer (recording an event, starting deliveries),
 * and the warning line a component writes when such work fails: components hold no logger, and
 * each of these failures has a safety net that finishes the work later (the events sweep, a retry).
 */

/** One JSON line on stderr, shaped like the processes' log lines. */
export function warnLine(msg: string, err: unknown, fields: Record<string, unknown> = {}): void {
  process.stderr.write(
    `${JSON.stringify({ level: 'warn', time: new Date().toISOString(), msg, ...fields, err: String((err as Error)?.message ?? err) })}\n`,
  );
}

/** Work under way after the answers that started it; `settled()` waits for it (a process shutting down). */
export class Background {
  private readonly inFlight = new Set<Promise<unknown>>();

  /** `failure`: the warning written when a piece of work fails (it says what finishes it later). */
  constructor(private readonly failure: string) {}

  run(work: Promise<unknown>): void {
    const p = work.catch((err) => warnLine(this.failure, err));
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight]);
  }
}
