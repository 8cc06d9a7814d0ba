/**
 * Meters: what a key (an organization's agent in one minute or one budget window, a user's
 * tokens held by calls in progress) has used and holds, kept as a chain of entries `<key>|<seq>`,
 * dense from 1, each carrying the whole state after it. Appending is one insert at seq + 1 under
 * the primary key, decided on the state of entry seq: of concurrent appenders, in any process,
 * exactly one gets each seq, so no check can be overtaken by another: a counter that holds on
 * both database servers without transactions or `$inc` (store.ts says why).
 */
import { Cache } from '../db';
import { PlatformError } from '../errors';
import { withKeyLock } from '../locks';
import { insertMeterEntry, meterEntry, pruneMeter, type MeterEntryDoc, type MeterHold, type MeterKind } from './store';

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
export const liveHolds = (open: MeterHold[], now: Date) => open.filter((h) => new Date(h.exp).getTime() > now.getTime());

export function held(s: MeterState, now: Date): { tokens: number; requests: number } {
  return liveHolds(s.open, now).reduce((a, h) => ({ tokens: a.tokens + h.tokens, requests: a.requests + h.requests }), { tokens: 0, requests: 0 });
}

export const withHold = (s: MeterState, hold: MeterHold, now: Date): MeterState => ({ used: s.used, requests: s.requests, open: [...liveHolds(s.open, now), hold] });

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
  /**
   * The newest entry this process knows per key: a hint only, where the next append starts.
   * It is never trusted for a refusal (append verifies the head first) and an append on a stale
   * hint fails on the primary key and reads on, so another process's entries are seen at the
   * next append. Dropped after 10 minutes unused (a window's key is not used again once over).
   */
  private heads = new Cache<string, Head>({ max: 50_000, ttlMs: 10 * 60_000 });
  private prunedAt = 0;

  constructor(private readonly kind: MeterKind) {}

  private at(key: string, seq: number) {
    return meterEntry(this.kind, key, seq);
  }

  /** The newest entry by primary-key probes: doubling, then bisecting (entries are dense). */
  private async probe(key: string): Promise<Head> {
    let found = await this.at(key, 1);
    if (!found) return { seq: 0, state: EMPTY };
    let missing = 2;
    for (;;) {
      const next = await this.at(key, missing);
      if (!next) break;
      found = next;
      missing *= 2;
    }
    let low = found.seq;
    while (missing - low > 1) {
      const mid = Math.floor((low + missing) / 2);
      const e = await this.at(key, mid);
      if (e) {
        found = e;
        low = mid;
      } else missing = mid;
    }
    return { seq: found.seq, state: stateOf(found) };
  }

  private remember(key: string, head: Head) {
    this.heads.set(key, head);
  }

  /** The newest entry, verified against the store. */
  async head(key: string): Promise<Head> {
    let head = this.heads.get(key);
    if (!head) head = await this.probe(key);
    else {
      for (;;) {
        const next = await this.at(key, head.seq + 1);
        if (!next) break;
        head = { seq: next.seq, state: stateOf(next) };
      }
    }
    this.remember(key, head);
    return head;
  }

  async read(key: string): Promise<MeterState> {
    return (await this.head(key)).state;
  }

  /**
   * Appends the state `decide` makes of the newest one. `decide` refuses by throwing; a refusal
   * counts only when taken on a verified head, never on this process's possibly stale hint.
   * Anything `decide` reads elsewhere is read after the head, so it sees every change that
   * preceded the head's entries.
   */
  async append(key: string, op: string, endsAt: Date | undefined, decide: (s: MeterState) => MeterState | Promise<MeterState>): Promise<MeterState> {
    await this.prune();
    return withKeyLock(`meter:${this.kind}|${key}`, async () => {
      let verify = false;
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const cached = verify ? undefined : this.heads.get(key);
        const head = cached ?? (await this.head(key));
        let next: MeterState;
        try {
          next = await decide(head.state);
        } catch (err) {
          if (!cached) throw err;
          verify = true;
          continue;
        }
        const seq = head.seq + 1;
        if (await insertMeterEntry(this.kind, { key, seq, op, used: next.used, requests: next.requests, open: next.open, ends_at: endsAt })) {
          this.remember(key, { seq, state: next });
          return next;
        }
        // another process appended entry seq: decide again on the state after it
        verify = true;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
      }
      throw new PlatformError(503, 'Model calls are busy for this organization; retry shortly', undefined, { 'Retry-After': '1' });
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
