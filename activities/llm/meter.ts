/**
 * Meters: what a key (an organization's agent in one minute or one budget window, a user's
 * tokens held by calls in progress) has used and holds, kept as a chain of entries `<key>|<seq>`,
 * dense from 1, each carrying the whole state after it. Appending reads the newest entry (the
 * (key, seq) index) and inserts seq + 1 under the primary key, decided on that state: of
 * concurrent appenders, in any process, exactly one gets each seq, so no check can be overtaken
 * by another. (A chain rather than one document per key updated on a condition: the chains
 * earlier versions wrote stay valid as they are, and each entry records the hold it took or settled.)
 */
import { busy } from '../core/errors.ts';
import { withKeyLock } from '../core/locks.ts';
import {
  insertMeterEntry,
  type MeterEntryDoc,
  meterHead,
  type MeterHold,
  type MeterKind,
  pruneMeter,
} from './store.ts';

export interface MeterState {
  /** tokens settled */
  used: number;
  /** calls settled */
  requests: number;
  open: MeterHold[];
}
interface Head {
  seq: number;
  state: MeterState;
}

const EMPTY: MeterState = { used: 0, requests: 0, open: [] };

/** Holds that still count at `now`: the hold of a call that crashed stops counting when it expires. */
const liveHolds = (open: MeterHold[], now: Date) => open.filter((h) => new Date(h.exp).getTime() > now.getTime());

export function held(s: MeterState, now: Date): { tokens: number; requests: number } {
  return liveHolds(s.open, now).reduce((a, h) => ({ tokens: a.tokens + h.tokens, requests: a.requests + h.requests }), {
    tokens: 0,
    requests: 0,
  });
}

export const withHold = (s: MeterState, hold: MeterHold, now: Date): MeterState => ({
  used: s.used,
  requests: s.requests,
  open: [...liveHolds(s.open, now), hold],
});

/** The hold `id` replaced by what its call really used (a hold that expired meanwhile is simply gone). */
export const withSettled = (s: MeterState, id: string, tokens: number, requests: number, now: Date): MeterState => ({
  used: s.used + tokens,
  requests: s.requests + requests,
  open: liveHolds(s.open, now).filter((h) => h.id !== id),
});

const stateOf = (d: MeterEntryDoc): MeterState => ({
  used: d.used,
  requests: d.requests,
  open: (d.open ?? []).map((h) => ({ id: h.id, tokens: h.tokens, requests: h.requests, exp: new Date(h.exp) })),
});

const PRUNE_EVERY_MS = 10 * 60_000;

export class Meter {
  private prunedAt = 0;

  constructor(private readonly kind: MeterKind) {}

  /** The newest entry (one read through the (key, seq) index). */
  async head(key: string): Promise<Head> {
    const e = await meterHead(this.kind, key);
    return e ? { seq: e.seq, state: stateOf(e) } : { seq: 0, state: EMPTY };
  }

  async read(key: string): Promise<MeterState> {
    return (await this.head(key)).state;
  }

  /**
   * Appends the state `decide` makes of the newest one; `decide` refuses by throwing. Anything
   * `decide` reads elsewhere is read after the head, so it sees every change that preceded the
   * head's entries.
   */
  async append(
    key: string,
    op: string,
    endsAt: Date | undefined,
    decide: (s: MeterState) => MeterState | Promise<MeterState>,
  ): Promise<MeterState> {
    await this.prune();
    return withKeyLock(`meter:${this.kind}|${key}`, async () => {
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const head = await this.head(key);
        const next = await decide(head.state);
        if (
          await insertMeterEntry(this.kind, {
            key,
            seq: head.seq + 1,
            op,
            used: next.used,
            requests: next.requests,
            open: next.open,
            ends_at: endsAt,
          })
        )
          return next;
        // another process appended entry seq + 1: decide again on the state after it
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
      }
      throw busy('Model calls are busy for this organization; retry shortly', 1);
    });
  }

  /** Entries of windows that ended over an hour ago are read by nobody: dropped now and then. */
  private async prune() {
    const now = Date.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    await pruneMeter(this.kind, new Date(now - 3_600_000)).catch(() => undefined);
  }
}
