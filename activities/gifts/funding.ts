/**
 * Gift funding: the provider account's balance, the check a redemption passes before its points
 * are held (an account that cannot pay for it refuses it at once, instead of a hold, an order the
 * provider refuses and a refund), and the organization's low-balance alert (`gifts.low_balance`,
 * at most once until the balance is back at or above the threshold). docs/components/gifts.md#funding.
 */
import type { ProviderBalance } from '../adapters/gift-provider.ts';
import { conflict, PlatformError } from '../core/errors.ts';
import { recordEvent } from '../events/index.ts';
import { giftProvider } from './provider.ts';
import { giftsSettings } from './settings.ts';
import { closeLowBalance, findGiftSettings, openLowBalance, saveGiftSettings, setSandboxAccount } from './store.ts';

export interface BalanceView extends ProviderBalance {
  provider: 'sandbox' | 'reloadly';
  /** the organization's threshold (null: none set), in `currency` */
  low_balance_threshold: number | null;
  low: boolean;
  checked_at: string;
}

/**
 * The Reloadly balance an edge read, reused for GIFT_BALANCE_CACHE_SECONDS (one account for the
 * platform, so one entry). Each admitted redemption takes its cost off the cached figure, so a
 * burst cannot all pass on one read. The sandbox's is one primary-key read and never cached.
 */
let cached: { value: ProviderBalance; at: number } | undefined;

async function readBalance(organization_id: string, fresh: boolean): Promise<ProviderBalance> {
  const provider = giftProvider();
  if (provider.name === 'sandbox') return provider.balance(organization_id);
  const ttl = giftsSettings().GIFT_BALANCE_CACHE_SECONDS * 1000;
  if (!fresh && cached && Date.now() - cached.at < ttl) return { ...cached.value };
  const value = await provider.balance(organization_id);
  cached = { value, at: Date.now() };
  return { ...value };
}

/**
 * Compares a balance read with the organization's threshold: under it, the episode opens (one
 * conditional write, so of two concurrent reads one records the event); at or above it, the
 * episode closes and the next fall alerts again.
 */
async function watchBalance(organization_id: string, b: ProviderBalance): Promise<number | null> {
  const s = await findGiftSettings(organization_id);
  const threshold = s?.low_balance_threshold ?? null;
  if (threshold === null) return null;
  if (b.balance >= threshold) {
    if (s?.low_balance_since) await closeLowBalance(organization_id);
    return threshold;
  }
  // An open episode records its event again: nothing new once recorded (its key is the episode),
  // and the event a crash lost between opening the episode and recording it.
  const episode = s?.low_balance_since
    ? (s.low_balance_episodes ?? 1)
    : await openLowBalance(organization_id, threshold);
  if (episode !== null)
    await recordEvent({
      organization_id,
      type: 'gifts.low_balance',
      key: `low_balance:${episode}`,
      data: { provider: giftProvider().name, balance: b.balance, currency: b.currency, threshold },
    });
  return threshold;
}

/** GET /api/gifts/provider/balance: read now (never the cache), and watched against the threshold. */
export async function providerBalance(organization_id: string): Promise<BalanceView> {
  const b = await readBalance(organization_id, true);
  const threshold = await watchBalance(organization_id, b);
  return {
    provider: giftProvider().name,
    ...b,
    low_balance_threshold: threshold,
    low: threshold !== null && b.balance < threshold,
    checked_at: new Date().toISOString(),
  };
}

/** Refused before anything is held: the account cannot pay for this gift now. */
const unfunded = () =>
  conflict(
    "This gift cannot be redeemed right now: the gift provider's account does not cover it (nothing was held). Please try again later",
  );

/**
 * Before a redemption's points are held: its cost in the account's currency must be covered. A
 * cost in another currency than the account's (a gift without a provider rate) is not checked
 * here; the provider's own refusal then ends the redemption refunded, as it always has. A cached
 * figure that looks too low is read again before refusing, so a funded account is never refused
 * on a stale read; one that looks high enough is trusted, for that same refusal is the safety net.
 */
export async function checkFunding(
  organization_id: string,
  cost: { amount: number; currency: string } | null,
): Promise<void> {
  if (!cost) return;
  let b = await readBalance(organization_id, false);
  if (b.currency === cost.currency && b.balance < cost.amount) b = await readBalance(organization_id, true);
  await watchBalance(organization_id, b);
  if (b.currency !== cost.currency) return;
  if (b.balance < cost.amount) throw unfunded();
  if (cached) cached.value.balance -= cost.amount;
}

export interface GiftSettingsView {
  low_balance_threshold: number | null;
  catalogue_sync: { scheduled: boolean; points_per_unit: number } | null;
  last_sync: {
    at: string;
    created: number;
    updated: number;
    withdrawn: number;
    unchanged: number;
    skipped: number;
  } | null;
}

export async function giftSettingsOf(organization_id: string): Promise<GiftSettingsView> {
  const s = await findGiftSettings(organization_id);
  const last = s?.last_sync;
  return {
    low_balance_threshold: s?.low_balance_threshold ?? null,
    catalogue_sync: s?.catalogue_sync
      ? { scheduled: s.catalogue_sync.scheduled, points_per_unit: s.catalogue_sync.points_per_unit }
      : null,
    last_sync: last
      ? {
          at: new Date(last.at).toISOString(),
          created: last.created ?? 0,
          updated: last.updated ?? 0,
          withdrawn: last.withdrawn ?? 0,
          unchanged: last.unchanged ?? 0,
          skipped: last.skipped ?? 0,
        }
      : null,
  };
}

/** PUT semantics: both fields are set as given (null: none). A new threshold watches afresh. */
export async function putGiftSettings(
  organization_id: string,
  input: Pick<GiftSettingsView, 'low_balance_threshold' | 'catalogue_sync'>,
): Promise<GiftSettingsView> {
  await saveGiftSettings(organization_id, input);
  return giftSettingsOf(organization_id);
}

/**
 * The sandbox account of the organization, set by its admin so the unfunded path can be tried
 * end to end; 409 with any other provider (a real account is funded with the provider).
 */
export async function setSandboxBalance(organization_id: string, value: ProviderBalance): Promise<BalanceView> {
  if (giftProvider().name !== 'sandbox')
    throw new PlatformError(
      'conflict',
      'Only the sandbox gift provider has a balance set here (GIFT_PROVIDER=sandbox)',
    );
  await setSandboxAccount(organization_id, value);
  return providerBalance(organization_id);
}
