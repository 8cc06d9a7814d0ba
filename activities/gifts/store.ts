/**
 * The gifts component's store: the only module that touches its models (the catalogue, the
 * redemptions and the sandbox provider's transactions). Every read of one thing is by primary key
 * (`_id` is the gift id, the redemption id, the order's customIdentifier); lists use the compound
 * indexes in models.ts.
 */
import type { ProviderBalance, SandboxAccounts, SandboxTransaction } from '../adapters/gift-provider.ts';
import { isDuplicateKey } from '../core/errors.ts';
import {
  Gift,
  GIFT_FIELDS,
  type GiftDoc,
  GiftSettings,
  type GiftSettingsDoc,
  type GiftType,
  PROVIDER_GIFT_FIELDS,
  Redemption,
  type RedemptionDoc,
  SandboxAccount,
  type SandboxAccountDoc,
  SandboxTransaction as SandboxTransactionModel,
  type SandboxTransactionDoc,
  type SyncCounts,
} from './models.ts';

export type GiftFields = Partial<Pick<GiftDoc, (typeof GIFT_FIELDS)[number] | (typeof PROVIDER_GIFT_FIELDS)[number]>>;

// ---------------------------------------------------------------- catalogue

export async function insertGift(doc: Omit<GiftDoc, 'created_at' | 'updated_at'>): Promise<GiftDoc> {
  return (await Gift.create(doc)).toObject();
}

export const findGift = (organization_id: string, gift_id: string) =>
  Gift.findOne({ _id: gift_id, organization_id }).lean<GiftDoc>();

/** Sets the given fields and removes the listed ones; null when the gift is not there. */
export const updateGift = (organization_id: string, gift_id: string, set: GiftFields, unset: string[]) =>
  Gift.findOneAndUpdate(
    { _id: gift_id, organization_id },
    { $set: set, ...(unset.length ? { $unset: Object.fromEntries(unset.map((f) => [f, 1])) } : {}) },
    { new: true },
  ).lean<GiftDoc>();

export async function removeGift(organization_id: string, gift_id: string): Promise<boolean> {
  return (await Gift.deleteOne({ _id: gift_id, organization_id })).deletedCount > 0;
}

export async function pageGifts(
  organization_id: string,
  filter: { gift_type?: GiftType; country?: string },
  page: number,
  limit: number,
) {
  const query: Record<string, string> = { organization_id };
  if (filter.gift_type) query.gift_type = filter.gift_type;
  if (filter.country) query.country = filter.country;
  const [docs, total] = await Promise.all([
    Gift.find(query)
      .sort({ created_at: -1, gift_id: 1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<GiftDoc[]>(),
    Gift.countDocuments(query),
  ]);
  return { docs, total };
}

export interface SearchableGift {
  id: string;
  gift_name: string;
  gift_type: GiftType;
  points_value: number | null;
}

/** What catalogue search scores: every gift of the organization, by name and type. */
export async function giftsForSearch(organization_id: string): Promise<SearchableGift[]> {
  const docs = await Gift.find({ organization_id }, { gift_id: 1, gift_name: 1, gift_type: 1, points_value: 1 }).lean<
    GiftDoc[]
  >();
  return docs.map((g) => ({
    id: g.gift_id,
    gift_name: g.gift_name,
    gift_type: g.gift_type,
    points_value: g.points_value ?? null,
  }));
}

// ---------------------------------------------------------------- redemptions

export const findRedemption = (redemption_id: string) => Redemption.findById(redemption_id).lean<RedemptionDoc>();

export type RedemptionFields = Omit<RedemptionDoc, '_id' | 'redemption_id' | 'created_at' | 'updated_at'>;

/** Who and what a redemption is for: written when the record is created, never again. */
export type RedemptionOwner = Pick<
  RedemptionFields,
  | 'operation_id'
  | 'organization_id'
  | 'user_id'
  | 'gift_id'
  | 'gift_name'
  | 'gift_type'
  | 'phone_number'
  | 'account_reference'
  | 'amount'
  | 'currency'
>;

/** Fields that may hold the person, as written for them, and what stands in for them after their erasure. */
export interface PersonalFields {
  own: Partial<RedemptionFields>;
  erased: (tombstone: string) => Partial<RedemptionFields>;
}

/**
 * Writes the redemption's current state. Only its workflow writes it, one step after another, so
 * a plain upsert by primary key is enough (no concurrent writer to lose); a step run again writes
 * the same values again. An erasure may have put its tombstone on the record since (its run is
 * left to settle), so nothing of the person is written back: the owner's fields are set only
 * when the record is created, and `personal` fields (a provider's reason, an admin's note, a PIN)
 * are written as they are only while the record still names the owner (one conditional update,
 * atomic against the erasure's own), else as their stand-ins (docs/privacy-components/gifts.md).
 */
export async function saveRedemption(
  redemption_id: string,
  fields: Partial<RedemptionFields>,
  owner?: RedemptionOwner,
  personal?: PersonalFields,
): Promise<RedemptionDoc> {
  if (owner && personal) {
    const mine = await Redemption.findOneAndUpdate(
      { _id: redemption_id, user_id: owner.user_id },
      { $set: { ...fields, ...personal.own } },
      { new: true },
    ).lean<RedemptionDoc>();
    if (mine) return mine;
    const now = await findRedemption(redemption_id);
    if (now)
      return (await Redemption.findOneAndUpdate(
        { _id: redemption_id },
        { $set: { ...fields, ...personal.erased(now.user_id) } },
        { new: true },
      ).lean<RedemptionDoc>())!;
  }
  const onInsert = Object.fromEntries(Object.entries({ redemption_id, ...owner }).filter(([, v]) => v !== undefined));
  const doc = await Redemption.findOneAndUpdate(
    { _id: redemption_id },
    { $set: { ...fields, ...personal?.own }, $setOnInsert: onInsert },
    { upsert: true, new: true },
  ).lean<RedemptionDoc>();
  return doc!;
}

/** Newest first; a user's (index organization_id, user_id, created_at) or the organization's. */
export async function pageRedemptions(
  organization_id: string,
  user_id: string | null,
  status: string | null,
  page: number,
  limit: number,
) {
  const query: Record<string, string> = { organization_id };
  if (user_id) query.user_id = user_id;
  if (status) query.status = status;
  const [docs, total] = await Promise.all([
    Redemption.find(query)
      .sort({ created_at: -1, _id: 1 })
      .skip((page - 1) * limit)
      .limit(limit)
      .lean<RedemptionDoc[]>(),
    Redemption.countDocuments(query),
  ]);
  return { docs, total };
}

// ---------------------------------------------------------------- sandbox provider's transactions

const fromSandboxDoc = (d: SandboxTransactionDoc): SandboxTransaction => ({
  custom_identifier: d._id,
  transaction_id: d.transaction_id,
  rule: d.rule,
  kind: d.kind,
  created_at: d.created_at,
});

/** The sandbox provider's transactions: the first order stored under an id is the one kept. */
export const sandboxTransactions = {
  async once(tx: SandboxTransaction): Promise<SandboxTransaction & { inserted: boolean }> {
    try {
      await SandboxTransactionModel.create({
        _id: tx.custom_identifier,
        transaction_id: tx.transaction_id,
        rule: tx.rule,
        kind: tx.kind,
        created_at: tx.created_at,
      });
      return { ...tx, inserted: true };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const first = await SandboxTransactionModel.findById(tx.custom_identifier).lean<SandboxTransactionDoc>();
      if (!first) throw err;
      return { ...fromSandboxDoc(first), inserted: false };
    }
  },
  async get(custom_identifier: string): Promise<SandboxTransaction | null> {
    const doc = await SandboxTransactionModel.findById(custom_identifier).lean<SandboxTransactionDoc>();
    return doc && fromSandboxDoc(doc);
  },
};

// ---------------------------------------------------------------- sandbox provider's accounts

/** What an organization's sandbox account holds before anyone sets it: enough for local use. */
const SANDBOX_OPENING_BALANCE: ProviderBalance = { balance: 1_000_000, currency: 'USD' };

const accountOf = (d: SandboxAccountDoc | null): ProviderBalance =>
  d ? { balance: d.balance, currency: d.currency } : { ...SANDBOX_OPENING_BALANCE };

/** Spending is one conditional $inc: two orders at once never take the account below zero. */
export const sandboxAccounts: SandboxAccounts = {
  async balance(account) {
    return accountOf(await SandboxAccount.findById(account).lean<SandboxAccountDoc>());
  },
  async spend(account, cost) {
    await SandboxAccount.updateOne(
      { _id: account },
      { $setOnInsert: { ...SANDBOX_OPENING_BALANCE } },
      { upsert: true },
    ).catch((err: unknown) => {
      if (!isDuplicateKey(err)) throw err;
    });
    const r = await SandboxAccount.updateOne(
      { _id: account, currency: cost.currency, balance: { $gte: cost.amount } },
      { $inc: { balance: -cost.amount } },
    );
    return r.modifiedCount === 1;
  },
  async refund(account, cost) {
    await SandboxAccount.updateOne({ _id: account, currency: cost.currency }, { $inc: { balance: cost.amount } });
  },
};

export async function setSandboxAccount(account: string, value: ProviderBalance): Promise<ProviderBalance> {
  const doc = await SandboxAccount.findOneAndUpdate(
    { _id: account },
    { $set: value },
    { upsert: true, new: true },
  ).lean<SandboxAccountDoc>();
  return accountOf(doc);
}

// ---------------------------------------------------------------- an organization's gift settings

export const findGiftSettings = (organization_id: string) =>
  GiftSettings.findById(organization_id).lean<GiftSettingsDoc>();

export async function saveGiftSettings(
  organization_id: string,
  set: Pick<GiftSettingsDoc, 'low_balance_threshold' | 'catalogue_sync'>,
): Promise<GiftSettingsDoc> {
  // A new threshold starts a new watch: the next read under it alerts again.
  return (await GiftSettings.findOneAndUpdate(
    { _id: organization_id },
    { $set: set, $unset: { low_balance_since: 1 } },
    { upsert: true, new: true },
  ).lean<GiftSettingsDoc>())!;
}

/**
 * Opens a low-balance episode unless one is open: one conditional write, so of two reads finding
 * the balance low at once only one opens it (and records its event). Answers the episode's
 * number, or null when one was already open.
 */
export async function openLowBalance(organization_id: string, threshold: number): Promise<number | null> {
  const doc = await GiftSettings.findOneAndUpdate(
    { _id: organization_id, low_balance_threshold: threshold, low_balance_since: null },
    { $set: { low_balance_since: new Date() }, $inc: { low_balance_episodes: 1 } },
    { new: true },
  ).lean<GiftSettingsDoc>();
  return doc ? (doc.low_balance_episodes ?? 1) : null;
}

/** The balance is back at or above the threshold: the next fall alerts again. */
export async function closeLowBalance(organization_id: string): Promise<void> {
  await GiftSettings.updateOne(
    { _id: organization_id, low_balance_since: { $ne: null } },
    { $unset: { low_balance_since: 1 } },
  );
}

/** The organizations whose catalogue the schedule syncs. */
export const scheduledSyncs = () => GiftSettings.find({ 'catalogue_sync.scheduled': true }).lean<GiftSettingsDoc[]>();

export async function recordSync(organization_id: string, counts: SyncCounts): Promise<void> {
  await GiftSettings.updateOne(
    { _id: organization_id },
    { $set: { last_sync: { at: new Date(), ...counts } } },
    { upsert: true },
  );
}

// ---------------------------------------------------------------- gifts imported from the provider

/** Every gift of the organization imported from this provider's catalogue (index organization_id, provider_product_id). */
export const providerGifts = (organization_id: string) =>
  Gift.find({ organization_id, provider_product_id: { $exists: true, $ne: null } }).lean<GiftDoc[]>();

/** Inserts an imported gift under its fixed id; false when it is there already (a concurrent sync). */
export async function insertProviderGift(doc: Omit<GiftDoc, 'created_at' | 'updated_at'>): Promise<boolean> {
  try {
    await Gift.create(doc);
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

// ---------------------------------------------------------------- one person's data (user-data.ts)

/** Every redemption of the user, newest first (index {organization_id, user_id, created_at}). */
export const redemptionsOfUser = (organization_id: string, user_id: string) =>
  Redemption.find({ organization_id, user_id }).sort({ created_at: -1 }).lean<RedemptionDoc[]>();

/**
 * Rewrites a redemption while it still belongs to `user_id` (a second run, or one after the
 * redemption's workflow wrote it again, changes only what is still the user's); true when it did.
 */
export async function tombstoneRedemption(
  redemption_id: string,
  user_id: string,
  set: Record<string, unknown>,
  unset: string[],
): Promise<boolean> {
  const update: Record<string, unknown> = { $set: set };
  if (unset.length) update.$unset = Object.fromEntries(unset.map((f) => [f, 1]));
  return (
    (await Redemption.updateOne({ _id: redemption_id, user_id }, update, { timestamps: false })).modifiedCount === 1
  );
}
