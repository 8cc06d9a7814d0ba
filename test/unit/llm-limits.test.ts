/**
 * The gateway's windows and holds with a fixed clock: budget periods turn over at UTC midnight,
 * on Monday 00:00 UTC and on the first of the month; a hold stops counting when it expires.
 */
import { describe, expect, it } from 'vitest';

import { held, withHold, withSettled } from '../../activities/llm/meter.ts';
import {
  budgetWindow,
  effectiveLimits,
  maskSecrets,
  minuteWindow,
  secondsUntil,
  TIER_DEFAULTS,
  tierDefaults,
} from '../../activities/llm/settings.ts';

const at = (iso: string) => new Date(iso);
const iso = (w: { start: Date; end: Date }) => [w.start.toISOString(), w.end.toISOString()];

describe('budget windows (UTC)', () => {
  it.each([
    ['daily', '2031-03-09T23:59:59.999Z', '2031-03-09T00:00:00.000Z', '2031-03-10T00:00:00.000Z'],
    ['daily', '2031-03-10T00:00:00.000Z', '2031-03-10T00:00:00.000Z', '2031-03-11T00:00:00.000Z'],
    ['daily', '2031-12-31T12:00:00.000Z', '2031-12-31T00:00:00.000Z', '2032-01-01T00:00:00.000Z'],
    // 2031-03-09 is a Sunday, 2031-03-10 a Monday: the week runs Monday to Sunday
    ['weekly', '2031-03-09T23:59:59.999Z', '2031-03-03T00:00:00.000Z', '2031-03-10T00:00:00.000Z'],
    ['weekly', '2031-03-10T00:00:00.000Z', '2031-03-10T00:00:00.000Z', '2031-03-17T00:00:00.000Z'],
    ['weekly', '2031-03-15T18:00:00.000Z', '2031-03-10T00:00:00.000Z', '2031-03-17T00:00:00.000Z'],
    ['weekly', '2031-12-31T08:00:00.000Z', '2031-12-29T00:00:00.000Z', '2032-01-05T00:00:00.000Z'],
    ['monthly', '2031-01-31T23:59:59.999Z', '2031-01-01T00:00:00.000Z', '2031-02-01T00:00:00.000Z'],
    ['monthly', '2032-02-29T10:00:00.000Z', '2032-02-01T00:00:00.000Z', '2032-03-01T00:00:00.000Z'],
    ['monthly', '2031-12-15T00:00:00.000Z', '2031-12-01T00:00:00.000Z', '2032-01-01T00:00:00.000Z'],
  ] as const)('%s at %s: from %s to %s', (period, now, start, end) => {
    expect(iso(budgetWindow(period, at(now)))).toEqual([start, end]);
  });

  it('a window ends where the next begins; the minute window and Retry-After', () => {
    for (const period of ['daily', 'weekly', 'monthly'] as const) {
      const w = budgetWindow(period, at('2031-03-09T23:59:59.999Z'));
      expect(budgetWindow(period, w.end).start).toEqual(w.end);
      expect(budgetWindow(period, new Date(w.end.getTime() - 1)).start).toEqual(w.start);
    }
    expect(iso(minuteWindow(at('2031-03-09T10:15:59.999Z')))).toEqual([
      '2031-03-09T10:15:00.000Z',
      '2031-03-09T10:16:00.000Z',
    ]);
    expect(secondsUntil(at('2031-03-10T00:00:00Z'), at('2031-03-09T23:59:30.200Z'))).toBe(30);
    expect(secondsUntil(at('2031-03-10T00:00:00Z'), at('2031-03-10T00:00:00Z'))).toBe(1);
  });
});

describe('tier limits', () => {
  it('free < business < enterprise; an organization only lowers its limits; the default configuration may change a tier', () => {
    const tiers = [TIER_DEFAULTS.free, TIER_DEFAULTS.business, TIER_DEFAULTS.enterprise];
    for (let i = 1; i < tiers.length; i += 1) {
      expect(tiers[i].limits.rpm).toBeGreaterThan(tiers[i - 1].limits.rpm);
      expect(tiers[i].limits.tpm).toBeGreaterThan(tiers[i - 1].limits.tpm);
      expect(tiers[i].budget.tokens).toBeGreaterThan(tiers[i - 1].budget.tokens);
    }
    expect(effectiveLimits({ rpm: 5 }, { rpm: 10, tpm: 100 })).toEqual({ rpm: 5, tpm: 100 });
    expect(effectiveLimits({ rpm: 50, tpm: 50 }, { rpm: 10, tpm: 100 })).toEqual({ rpm: 10, tpm: 50 });
    expect(tierDefaults('free', { tiers: { free: { limits: { rpm: 3 } } } })).toEqual({
      limits: { rpm: 3, tpm: TIER_DEFAULTS.free.limits.tpm },
      budget: TIER_DEFAULTS.free.budget,
    });
  });

  it('masks secret-looking values in version diffs, once', () => {
    const mask = (s: string) => `${s.slice(0, 3)}…${s.slice(-4)}`;
    expect(
      maskSecrets(
        {
          agent_specific_settings: { to: { api_key: 'sk-abcdefghijkl', max_tokens: 5, note: 'plain' } },
          api_key: { to: 'sk-…ijkl' },
        },
        mask,
      ),
    ).toEqual({
      agent_specific_settings: { to: { api_key: 'sk-…ijkl', max_tokens: 5, note: 'plain' } },
      api_key: { to: 'sk-…ijkl' },
    });
  });
});

describe('holds', () => {
  it('count until settled or expired: a crashed call stops holding tokens when its hold expires', () => {
    const t0 = at('2031-03-09T10:00:00Z');
    const exp = at('2031-03-09T10:10:00Z');
    let s = withHold({ used: 0, requests: 0, open: [] }, { id: 'a', tokens: 100, requests: 1, exp }, t0);
    s = withHold(s, { id: 'b', tokens: 40, requests: 1, exp: at('2031-03-09T10:11:00Z') }, t0);
    expect(held(s, at('2031-03-09T10:09:59Z'))).toEqual({ tokens: 140, requests: 2 });
    expect(held(s, exp)).toEqual({ tokens: 40, requests: 1 }); // a expired (its call never settled)
    const settled = withSettled(s, 'b', 25, 1, at('2031-03-09T10:01:00Z'));
    expect(settled.used).toBe(25);
    expect(settled.requests).toBe(1);
    expect(held(settled, at('2031-03-09T10:01:00Z'))).toEqual({ tokens: 100, requests: 1 });
    // settling after the hold expired still counts what was used, once
    const late = withSettled(s, 'a', 90, 1, at('2031-03-09T10:20:00Z'));
    expect(late).toMatchObject({ used: 90, requests: 1, open: [] });
  });
});
