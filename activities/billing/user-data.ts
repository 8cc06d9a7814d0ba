/**
 * billing's part of a user's export and erasure (docs/privacy.md, docs/privacy-components/billing.md).
 *
 * Purchases, the token credits they bought, refunds and usage are the organization's books: all
 * are kept, handed to the tombstone (user_id replaced), so the tombstone's balance is the user's
 * balance and every total (per organization, per agent, the system overview) stays as it was.
 * None of them holds a phone, an address or free text of the person, and never card data (the
 * payment method is never stored). Provider events name transactions only.
 */
import type { ErasureScope, ExportPart, UserData, UserScope } from '../core/user-data.ts';
import { tokenUsage } from './billing.ts';
import { purchasesOfUser, tokenLedgerOf, tombstoneTokenRecords } from './store.ts';

const iso = (d: Date | string | undefined | null) => (d ? new Date(d).toISOString() : null);

async function exportBilling(scope: UserScope): Promise<ExportPart> {
  const { organization_id, user_id } = scope;
  const [purchases, ledger, summary] = await Promise.all([
    purchasesOfUser(organization_id, user_id),
    tokenLedgerOf(organization_id, user_id),
    tokenUsage(organization_id, user_id),
  ]);
  return {
    data: {
      balance: [{ remaining_tokens: summary.remaining_tokens, credits: summary.credits }],
      purchases: purchases.map((p) => ({
        transaction_id: p._id,
        package_id: p.package_id,
        tokens: p.tokens,
        price: p.price,
        currency: p.currency,
        validity_days: p.validity_days,
        provider: p.provider,
        status: p.status,
        failure_reason: p.failure_reason ?? null,
        created_at: iso(p.created_at),
        updated_at: iso(p.updated_at),
      })),
      credits: ledger.credits.map((c) => ({
        transaction_id: c.transaction_id,
        tokens: c.tokens,
        expires_at: iso(c.expires_at),
        source: c.source,
        created_at: iso(c.created_at),
      })),
      refunds: ledger.refunds.map((r) => ({ transaction_id: r.transaction_id, created_at: iso(r.created_at) })),
      usage: ledger.usage
        .map((u) => ({
          id: u._id,
          agent: u.agent,
          model: u.model,
          prompt_tokens: u.prompt_tokens,
          completion_tokens: u.completion_tokens,
          tokens: u.tokens,
          created_at: iso(u.created_at),
        }))
        .sort((a, b) => (a.created_at ?? '').localeCompare(b.created_at ?? '')),
    },
    files: [],
  };
}

const MAX_ROUNDS = 20;

async function eraseBilling(scope: ErasureScope): Promise<Record<string, number>> {
  const report = { purchases_tombstoned: 0, credits_tombstoned: 0, refunds_tombstoned: 0, usage_tombstoned: 0 };
  // A purchase or a model call finishing meanwhile may write one more record under the user: the
  // next round (or a second erasure at the end) hands it over too.
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const n = await tombstoneTokenRecords(scope.organization_id, scope.user_id, scope.tombstone);
    report.purchases_tombstoned += n.purchases;
    report.credits_tombstoned += n.credits;
    report.refunds_tombstoned += n.refunds;
    report.usage_tombstoned += n.usage;
    if (!n.purchases && !n.credits && !n.refunds && !n.usage) break;
  }
  return report;
}

export const billingUserData: UserData = {
  export: exportBilling,
  erase: eraseBilling,
};
