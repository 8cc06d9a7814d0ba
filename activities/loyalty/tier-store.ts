/**
 * Tiers' data (tier-models.ts): the only file that reads or writes them. A member's standing is
 * read by `_id`; the review reads members due on {review_at}; history pages on
 * {organization_id, user_id, n}.
 */
import { insertOnce } from '../core/db/index.ts';
import {
  MemberTier,
  type MemberTierDoc,
  TierChange,
  type TierChangeDoc,
  TierProgram,
  type TierProgramDoc,
} from './tier-models.ts';

export const memberKey = (organization_id: string, user_id: string) => `${organization_id}|${user_id}`;

export const readTierProgram = (organization_id: string) =>
  TierProgram.findById(organization_id).lean<TierProgramDoc>();

export async function writeTierProgram(doc: TierProgramDoc): Promise<void> {
  await TierProgram.replaceOne({ _id: doc._id }, doc, { upsert: true });
}

export const readMemberTier = (organization_id: string, user_id: string) =>
  MemberTier.findById(memberKey(organization_id, user_id)).lean<MemberTierDoc>();

/** A member's first standing; false when another writer made it first. */
export const insertMemberTier = (doc: MemberTierDoc) => insertOnce(MemberTier, { ...doc });

/**
 * Applies a change to the standing read with `changes` = n (the update names n + 1): false when
 * another change got there first, and nothing is written.
 */
export async function updateMemberTier(
  organization_id: string,
  user_id: string,
  n: number,
  set: Partial<MemberTierDoc>,
): Promise<boolean> {
  const res = await MemberTier.updateOne(
    { _id: memberKey(organization_id, user_id), changes: n },
    { $set: { ...set, changes: n + 1, updated_at: new Date() } },
  );
  return res.modifiedCount === 1;
}

/** Keeps the window a member's earned points were last counted from (no change of tier). */
export async function setMemberWindow(
  organization_id: string,
  user_id: string,
  window_start: Date,
  earned_before_window: number,
): Promise<void> {
  await MemberTier.updateOne(
    { _id: memberKey(organization_id, user_id) },
    { $set: { window_start, earned_before_window } },
  );
}

export async function setMemberAttributes(
  organization_id: string,
  user_id: string,
  attributes: Record<string, string>,
  fresh: MemberTierDoc,
): Promise<MemberTierDoc> {
  const doc = await MemberTier.findOneAndUpdate(
    { _id: memberKey(organization_id, user_id) },
    { $set: { attributes, updated_at: new Date() } },
    { new: true },
  ).lean<MemberTierDoc>();
  if (doc) return doc;
  if (await insertMemberTier({ ...fresh, attributes })) return { ...fresh, attributes };
  return setMemberAttributes(organization_id, user_id, attributes, fresh);
}

/** Members whose review is due, soonest first. */
export const membersDue = (now: Date, limit: number) =>
  MemberTier.find({ review_at: { $lte: now } })
    .sort({ review_at: 1 })
    .limit(limit)
    .lean<MemberTierDoc[]>();

/** Records change n of a member (idempotent: its `_id` is the member and n). */
export const insertTierChange = (doc: TierChangeDoc) => insertOnce(TierChange, { ...doc });

export const tierChangesOf = (organization_id: string, user_id: string, limit: number, before?: number) =>
  TierChange.find({ organization_id, user_id, ...(before !== undefined && { n: { $lt: before } }) })
    .sort({ n: -1 })
    .limit(limit)
    .lean<TierChangeDoc[]>();

// ---- one person's data ----

export const allTierChangesOf = (organization_id: string, user_id: string) =>
  TierChange.find({ organization_id, user_id }).sort({ n: 1 }).lean<TierChangeDoc[]>();

/** Deletes the member's standing and tier history: what remains is the organization's totals in the ledger. */
export async function deleteTierDataOf(organization_id: string, user_id: string): Promise<number> {
  const [a, b] = await Promise.all([
    MemberTier.deleteOne({ _id: memberKey(organization_id, user_id) }),
    TierChange.deleteMany({ organization_id, user_id }),
  ]);
  return (a.deletedCount ?? 0) + (b.deletedCount ?? 0);
}
