/**
 * gifts's part of a user's export and erasure (docs/privacy.md, docs/privacy-components/gifts.md).
 *
 * Redemptions (and reservations: a redemption still processing or in review holds its points)
 * are the organization's books, as are their ledger entries (loyalty's erasure): they are kept,
 * the person replaced by the tombstone (user_id, the phone number, the account reference, the
 * admin's note on the settlement, the person's ids and numbers in the status reason) and the
 * electronic PIN removed. Points, statuses, gift and provider transaction stay, so the
 * organization's totals and the redemption's figures (points_spent = refunded + lapsed) still hold.
 * The catalogue is the organization's and the sandbox provider's transactions name no one.
 */
import { scrubber } from '../core/scrub.ts';
import type { ErasureScope, ExportPart, UserData, UserScope } from '../core/user-data.ts';
import type { RedemptionDoc } from './models.ts';
import { viewRedemption } from './redemptions.ts';
import { redemptionsOfUser, tombstoneRedemption } from './store.ts';

async function exportGifts(scope: UserScope): Promise<ExportPart> {
  const docs = await redemptionsOfUser(scope.organization_id, scope.user_id);
  return {
    data: {
      // As the owner reads them, without the PIN (a secret: the redemption route shows it to its owner).
      redemptions: docs.map((d) => ({
        ...viewRedemption({ ...d, pin_encrypted: undefined }, { user_id: scope.user_id, level: 0 }),
        has_pin: Boolean(d.pin_encrypted),
      })),
    },
    files: [],
  };
}

/** What replaces the person in one redemption. */
function tombstoned(r: RedemptionDoc, scope: ErasureScope): { set: Record<string, unknown>; unset: string[] } {
  const t = scope.tombstone;
  const scrub = scrubber([scope.user_id, scope.idp_id, r.phone_number ?? '', r.account_reference ?? ''], t, true);
  const set: Record<string, unknown> = { user_id: t };
  if (r.phone_number) set.phone_number = t;
  if (r.account_reference) set.account_reference = t;
  if (r.status_reason) set.status_reason = scrub(r.status_reason);
  if (r.settlement?.reason) set['settlement.reason'] = t; // the admin's own note about the person
  return { set, unset: r.pin_encrypted ? ['pin_encrypted'] : [] };
}

const MAX_ROUNDS = 20;

async function eraseGifts(scope: ErasureScope): Promise<Record<string, number>> {
  let redemptions_tombstoned = 0;
  // A redemption's workflow still running may write its record again (its user_id, its phone):
  // the next round, or a second erasure at the end, tombstones it again.
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const docs = await redemptionsOfUser(scope.organization_id, scope.user_id);
    if (!docs.length) break;
    for (const r of docs) {
      const { set, unset } = tombstoned(r, scope);
      if (await tombstoneRedemption(r._id, scope.user_id, set, unset)) redemptions_tombstoned += 1;
    }
  }
  return { redemptions_tombstoned };
}

export const giftsUserData: UserData = {
  export: exportGifts,
  erase: eraseGifts,
};
