/**
 * loyalty's part of a user's export and erasure (docs/privacy.md, docs/privacy-components/loyalty.md).
 *
 * Ledger entries are the organization's books: they are kept, the person replaced by the
 * tombstone in place (user_id, the operation and request ids and descriptions that named them,
 * a reversal's reason dropped from its description, an award's note removed), so the entries become the tombstone's ledger with the same seq, balance_after chain and lots:
 * the organization's totals, the expiry run and every invariant hold as before. Referral codes
 * are deleted (their QR images are drawn per request, never stored); a referral keeps the other
 * user's side, the erased side tombstoned.
 */
import { scrubber } from '../core/scrub.ts';
import type { ErasureScope, ExportPart, UserData, UserScope } from '../core/user-data.ts';
import { campaignsOfMember, tombstoneCampaignMembers, tombstoneUses, usesOfUser } from './campaign-store.ts';
import { getBalance, viewEntry } from './ledger.ts';
import { HEAD_KEPT_MS } from './member.ts';
import type { LedgerEntryDoc } from './models.ts';
import { gatherLoyaltyFacts } from './once-only.ts';
import { publishEntry } from './publish.ts';
import { referralUrl } from './referrals.ts';
import {
  clearEventPending,
  deleteReferralCodesOf,
  entriesOfUser,
  type EntryTombstone,
  referralCodesOf,
  referralPairsNaming,
  referralReversalsOf,
  referralsNaming,
  rekeyReferralPair,
  setReferralReversal,
  tombstoneEntries,
  tombstoneReferrals,
} from './store.ts';
import { allTierChangesOf, deleteTierDataOf, readMemberTier } from './tier-store.ts';
import { forgetStanding } from './tiers.ts';

/** What replaces an entry's person: the same entry, as the tombstone's. */
function tombstoned(e: LedgerEntryDoc, scope: ErasureScope): EntryTombstone {
  // Operation and request ids: only the user_id (award:<user>:…, <user>:<key>), so two ids never become one.
  const scrub = scrubber([scope.user_id], scope.tombstone);
  const text = scrubber([scope.user_id, scope.idp_id], scope.tombstone, true);
  const operation_id = scrub(e.operation_id);
  // A reversal's description ends with the admin's free-text reason about the person: dropped.
  const description =
    e.reason === 'reversal' && e.operation_id.startsWith('reversal:')
      ? `reversal of ${scrub(e.operation_id.slice('reversal:'.length))}: ${scope.tombstone}`
      : e.description === undefined
        ? undefined
        : text(e.description);
  return {
    user_id: scope.tombstone,
    operation_id,
    ...(e.request_id !== undefined && { request_id: scrub(e.request_id) }),
    ...(description !== undefined && { description }),
  };
}

const iso = (d: Date | string | undefined | null) => (d ? new Date(d).toISOString() : null);

async function exportLoyalty(scope: UserScope): Promise<ExportPart> {
  const { organization_id, user_id } = scope;
  const [entries, codes, referrals, standing, tierChanges, uses, reached] = await Promise.all([
    entriesOfUser(organization_id, user_id),
    referralCodesOf(organization_id, user_id),
    referralsNaming(organization_id, user_id),
    readMemberTier(organization_id, user_id),
    allTierChangesOf(organization_id, user_id),
    usesOfUser(organization_id, user_id),
    campaignsOfMember(organization_id, user_id),
  ]);
  const balance = await getBalance(organization_id, user_id).then(
    (b) => [
      {
        points: b.points,
        pending_points: b.pending_points,
        expiring: b.expiring,
        last_updated: b.last_updated,
        entries: b.entries,
      },
    ],
    () => [],
  );
  const prefix = `${user_id}:`;
  return {
    data: {
      balance,
      entries: entries.map((e) => ({
        ...viewEntry(e),
        breakdown: e.breakdown ?? null,
        client_request_id: e.request_id?.startsWith(prefix)
          ? e.request_id.slice(prefix.length)
          : (e.request_id ?? null),
      })),
      tier: standing
        ? [
            {
              tier_id: standing.tier_id,
              since: iso(standing.since),
              valid_until: iso(standing.valid_until),
              set_by_hand: standing.manual
                ? { reason: standing.manual.reason, until: iso(standing.manual.until) }
                : null,
              attributes: standing.attributes,
            },
          ]
        : [],
      tier_history: tierChanges.map((c) => ({
        n: c.n,
        from_tier: c.from_tier,
        to_tier: c.to_tier,
        change: c.kind,
        earned_in_window: c.earned_in_window,
        valid_until: iso(c.valid_until),
        reason: c.reason,
        at: iso(c.at),
      })),
      // The uses a campaign's per-member limit counts; every share of an award is on its entry.
      campaign_uses: uses.map((u) => ({ campaign_id: u.campaign_id, window: u.window, used: u.used })),
      campaigns_reached: reached.map((m) => ({ campaign_id: m.campaign_id, first_at: iso(m.at) })),
      referral_codes: codes.map((c) => ({
        code: c.code,
        referral_url: referralUrl(c.code),
        created_at: iso(c.created_at),
      })),
      // Only the user's own side: never the other user's id.
      referrals: referrals.map((r) => {
        const role = r.referrer_user_id === user_id ? 'referrer' : 'referred';
        return {
          referral_id: r.referral_id,
          role,
          points: role === 'referrer' ? r.referrer_points : r.referred_points,
          status: r.status,
          created_at: iso(r.created_at),
          completed_at: iso(r.completed_at),
        };
      }),
    },
    files: [],
  };
}

/** Rounds of "read what is still the user's, tombstone it": a concurrent append is caught by the next round. */
const MAX_ROUNDS = 20;

async function eraseLoyalty(scope: ErasureScope): Promise<Record<string, number>> {
  const { organization_id, user_id, tombstone } = scope;
  const report = {
    entries_tombstoned: 0,
    entry_events_recorded: 0,
    referral_codes_deleted: 0,
    referral_reversals_tombstoned: 0,
    referral_pairs_rekeyed: 0,
    referrals_tombstoned: 0,
    tier_records_deleted: 0,
    campaign_uses_tombstoned: 0,
    campaign_reach_tombstoned: 0,
  };

  // The ledger. An entry whose event is not recorded yet is told first (as it was written, keyed by
  // its operation: events' erasure then tombstones the event), so no event is lost or told twice.
  // A process may draft on a head it read up to HEAD_KEPT_MS ago (member.ts): the rounds go on
  // until twice that has passed since the first entry was tombstoned, so an append drafted on a
  // head read before it is caught too.
  let first: number | undefined;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const entries = await entriesOfUser(organization_id, user_id);
    if (!entries.length) {
      const wait = first === undefined ? 0 : first + 2 * HEAD_KEPT_MS - Date.now();
      if (wait <= 0) break;
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    first ??= Date.now();
    const pending = entries.filter((e) => e.event_pending);
    for (const e of pending) await publishEntry(e);
    await clearEventPending(pending.map((e) => e._id));
    report.entry_events_recorded += pending.length;
    report.entries_tombstoned += await tombstoneEntries(
      user_id,
      entries.map((e) => ({ _id: e._id, set: tombstoned(e, scope) })),
    );
  }

  // Referral codes: deleted (the landing page and any printed QR then answer 404).
  report.referral_codes_deleted = await deleteReferralCodesOf(organization_id, user_id);

  // Referrals: the reversal marks of the erased side first, then the pair claims, then the
  // referrals themselves (which the next run reads to find the marks: so they go last).
  const referrals = await referralsNaming(organization_id, user_id);
  const sideOf = new Map(
    referrals.map((r) => [r.referral_id, r.referrer_user_id === user_id ? 'referrer' : 'referred']),
  );
  for (const mark of await referralReversalsOf(referrals.map((r) => r.referral_id))) {
    const referral = referrals.find((r) => r.referral_id === mark.referral_id);
    const bothSides = referral?.referrer_user_id === user_id && referral?.referred_user_id === user_id;
    if (!bothSides && sideOf.get(mark.referral_id) !== mark.side) continue; // the other user's side stays as it is
    const reversal = { ...mark.reversal, reason: tombstone };
    if (mark.reversal.reason === tombstone) continue;
    await setReferralReversal(mark._id, reversal);
    report.referral_reversals_tombstoned += 1;
  }
  for (const pair of await referralPairsNaming(organization_id, user_id)) {
    const swap = (u: string) => (u === user_id ? tombstone : u);
    await rekeyReferralPair(pair, {
      organization_id,
      referrer_user_id: swap(pair.referrer_user_id),
      referred_user_id: swap(pair.referred_user_id),
      referral_id: pair.referral_id,
    });
    report.referral_pairs_rekeyed += 1;
  }
  report.referrals_tombstoned = await tombstoneReferrals(organization_id, user_id, tombstone);
  // Tiers: the standing (attributes included) and its history, with the admins' reasons, are the
  // person's: deleted. Campaign uses and reach are the campaigns' books (limits, reports): tombstoned.
  report.tier_records_deleted = await deleteTierDataOf(organization_id, user_id);
  await forgetStanding(organization_id, user_id);
  report.campaign_uses_tombstoned = await tombstoneUses(organization_id, user_id, tombstone);
  report.campaign_reach_tombstoned = await tombstoneCampaignMembers(organization_id, user_id, tombstone);
  return report;
}

export const loyaltyUserData: UserData = {
  export: exportLoyalty,
  erase: eraseLoyalty,
  onceOnly: gatherLoyaltyFacts,
};
