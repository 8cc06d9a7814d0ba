/**
 * The token balance from credits, usage and refunds (pure). Usage consumes the oldest credit
 * that had not expired when the tokens were used; a refund removes what is left of its credit;
 * what remains now is the sum over credits that have not expired.
 */
export interface CreditEntry {
  id: string;
  tokens: number;
  at: Date;
  expires_at: Date;
}
export interface UsageEntry {
  tokens: number;
  at: Date;
}
export interface RefundEntry {
  credit_id: string;
  at: Date;
}

export interface Balance {
  remaining: number;
  /** tokens used beyond what the credits covered (a race between two gateway calls) */
  overdraft: number;
  credits: Array<{ id: string; tokens: number; left: number; expires_at: Date; expired: boolean; refunded: boolean }>;
}

export function computeBalance(
  credits: CreditEntry[],
  usages: UsageEntry[],
  refunds: RefundEntry[],
  now: Date,
): Balance {
  type Ev = { at: number; order: number; apply: () => void };
  // Credits are available from their own time: usage only draws on credits older than it.
  const state = credits.map((c) => ({
    id: c.id,
    tokens: c.tokens,
    left: c.tokens,
    at: c.at.getTime(),
    expires: c.expires_at.getTime(),
    refunded: false,
  }));
  const byId = new Map(state.map((c) => [c.id, c]));
  const oldestFirst = [...state].sort((a, b) => a.at - b.at);
  let overdraft = 0;
  const events: Ev[] = [];
  for (const u of usages) {
    const t = u.at.getTime();
    events.push({
      at: t,
      order: 1,
      apply: () => {
        let need = u.tokens;
        for (const c of oldestFirst) {
          if (!need) break;
          if (c.refunded || c.left === 0 || c.expires <= t || c.at > t) continue;
          const take = Math.min(c.left, need);
          c.left -= take;
          need -= take;
        }
        overdraft += need;
      },
    });
  }
  for (const r of refunds) {
    events.push({
      at: r.at.getTime(),
      order: 2,
      apply: () => {
        const c = byId.get(r.credit_id);
        if (c) {
          c.left = 0;
          c.refunded = true;
        }
      },
    });
  }
  events.sort((a, b) => a.at - b.at || a.order - b.order).forEach((e) => e.apply());
  const n = now.getTime();
  return {
    remaining: state.filter((c) => c.expires > n).reduce((s, c) => s + c.left, 0),
    overdraft,
    credits: state.map((c) => ({
      id: c.id,
      tokens: c.tokens,
      left: c.left,
      expires_at: new Date(c.expires),
      expired: c.expires <= n,
      refunded: c.refunded,
    })),
  };
}
