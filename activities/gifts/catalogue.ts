/**
 * The provider's gift-card catalogue imported into an organization's gifts: new products created,
 * changed ones updated, withdrawn ones marked `available: false` (never deleted: past redemptions
 * name them), each run's counts kept and answered. By hand (POST /api/gifts/catalogue/sync) or
 * daily for the organizations that ask for it (the Schedule `gifts:catalogue:<task queue>`).
 */
import { createHash } from 'node:crypto';

import type { ProviderProduct } from '../adapters/gift-provider.ts';
import { warnLine } from '../core/background.ts';
import { invalid } from '../core/errors.ts';
import type { GiftDoc, SyncCounts } from './models.ts';
import { giftProvider } from './provider.ts';
import {
  findGiftSettings,
  insertProviderGift,
  providerGifts,
  recordSync,
  scheduledSyncs,
  updateGift,
} from './store.ts';

/** One gift id per organization, provider and product: two syncs at once create it once. */
const importedId = (organization_id: string, provider: string, product_id: string) =>
  `gft_${createHash('sha256').update(`${organization_id}\u0000${provider}\u0000${product_id}`).digest('base64url').slice(0, 22)}`;

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/** The gift's catalogue fields of a product (what a sync compares and writes). */
function fieldsOf(p: ProviderProduct, points_per_provider_unit: number): Partial<GiftDoc> {
  // Points per unit of the gift's own currency: the organization prices the provider's currency.
  const rate = p.rate ?? (p.sender_currency === p.currency || !p.sender_currency ? 1 : null);
  const points_per_unit = rate === null ? undefined : round(points_per_provider_unit * rate, 6);
  return {
    gift_name: p.name.slice(0, 200),
    gift_type: 'electronic_pins',
    supplier: (p.brand ?? p.name).slice(0, 200),
    country: p.country ?? undefined,
    url_photo: p.logo_url ?? undefined,
    denominations:
      p.denominations.type === 'fixed'
        ? { type: 'fixed', currency: p.currency, amounts: p.denominations.amounts.slice(0, 50) }
        : { type: 'range', currency: p.currency, min: p.denominations.min, max: p.denominations.max },
    points_per_unit,
    provider_product_id: p.product_id,
    provider_currency: p.sender_currency ?? undefined,
    provider_rate: rate ?? undefined,
    available: true,
  };
}

const COMPARED = [
  'gift_name',
  'supplier',
  'country',
  'url_photo',
  'denominations',
  'points_per_unit',
  'provider_currency',
  'provider_rate',
  'available',
] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The product's denominations as stored (mongoose returns them in schema order). */
const normal = (d: GiftDoc['denominations']) =>
  d &&
  (d.type === 'fixed'
    ? { type: d.type, currency: d.currency, amounts: d.amounts }
    : { type: d.type, currency: d.currency, min: d.min, max: d.max });

/**
 * Applies one catalogue to the organization's imported gifts. A product that cannot be priced
 * (no rate to the account's currency) is skipped; points follow `points_per_unit` (points per unit
 * of the account's currency).
 */
export async function applyCatalogue(
  organization_id: string,
  provider: string,
  products: ProviderProduct[],
  points_per_unit: number,
): Promise<SyncCounts> {
  const counts: SyncCounts = { created: 0, updated: 0, withdrawn: 0, unchanged: 0, skipped: 0 };
  const existing = new Map((await providerGifts(organization_id)).map((g) => [g.provider_product_id!, g]));
  const seen = new Set<string>();
  for (const p of products) {
    if (seen.has(p.product_id)) continue;
    seen.add(p.product_id);
    const fields = fieldsOf(p, points_per_unit);
    if (fields.points_per_unit === undefined || fields.points_per_unit <= 0) {
      counts.skipped += 1;
      continue;
    }
    const current = existing.get(p.product_id);
    if (!current) {
      const gift_id = importedId(organization_id, provider, p.product_id);
      const clean = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
      if (await insertProviderGift({ _id: gift_id, gift_id, organization_id, ...clean } as GiftDoc))
        counts.created += 1;
      else counts.unchanged += 1; // a concurrent sync created it
      continue;
    }
    const changed = COMPARED.filter((f) =>
      f === 'denominations' ? !same(normal(current.denominations), fields.denominations) : !same(current[f], fields[f]),
    );
    if (!changed.length) {
      counts.unchanged += 1;
      continue;
    }
    const set = Object.fromEntries(changed.filter((f) => fields[f] !== undefined).map((f) => [f, fields[f]]));
    const unset = changed.filter((f) => fields[f] === undefined);
    await updateGift(organization_id, current.gift_id, set, unset);
    counts.updated += 1;
  }
  for (const [product_id, g] of existing) {
    if (seen.has(product_id) || g.available === false) continue;
    await updateGift(organization_id, g.gift_id, { available: false }, []);
    counts.withdrawn += 1;
  }
  await recordSync(organization_id, counts);
  return counts;
}

/**
 * POST /api/gifts/catalogue/sync: the provider's catalogue now. `points_per_unit` prices it
 * (else the organization's saved setting; neither: 400 naming it).
 */
export async function syncCatalogue(
  organization_id: string,
  points_per_unit?: number,
): Promise<SyncCounts & { provider: string; products: number }> {
  const saved = (await findGiftSettings(organization_id))?.catalogue_sync?.points_per_unit;
  const price = points_per_unit ?? saved;
  if (!price)
    throw invalid(
      'points_per_unit',
      'required: points per unit of the provider account currency (or set catalogue_sync in PUT /api/gifts/settings)',
    );
  const provider = giftProvider();
  const products = await provider.catalogue();
  const counts = await applyCatalogue(organization_id, provider.name, products, price);
  return { provider: provider.name, products: products.length, ...counts };
}

/** The scheduled run: every organization whose catalogue_sync says scheduled; one failing does not stop the rest. */
export async function syncScheduledCatalogues(): Promise<{ organizations: number; failed: number }> {
  const due = await scheduledSyncs();
  if (!due.length) return { organizations: 0, failed: 0 };
  const provider = giftProvider();
  const products = await provider.catalogue(); // one read of the provider for all of them
  let failed = 0;
  for (const s of due) {
    try {
      await applyCatalogue(s._id, provider.name, products, s.catalogue_sync!.points_per_unit);
    } catch (err) {
      failed += 1;
      warnLine('gifts: a scheduled catalogue sync failed', err, { organization_id: s._id });
    }
  }
  return { organizations: due.length, failed };
}
