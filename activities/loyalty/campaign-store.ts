/**
 * Campaigns' data (campaign-models.ts): the only file that reads or writes them. A budget is taken
 * by conditional updates of `budget_left` on the campaign document (never below what is left, so
 * concurrent awards cannot overspend it) and given back by an increment: by an award that was not
 * written, or by the call that wrote a reversal (engine.ts). A member's limit likewise, on the
 * member's use document.
 */
import type { mongo } from 'mongoose';

import { insertEach, insertOnce, isDuplicateKey } from '../core/db/index.ts';
import {
  Campaign,
  CampaignDay,
  type CampaignDayDoc,
  type CampaignDoc,
  CampaignMember,
  type CampaignMemberDoc,
  CampaignUse,
  type CampaignUseDoc,
  CampaignVersion,
  type CampaignVersionDoc,
} from './campaign-models.ts';

export const insertCampaign = (doc: CampaignDoc) => insertOnce(Campaign, { ...doc });

export const campaignById = (organization_id: string, campaign_id: string) =>
  Campaign.findOne({ _id: campaign_id, organization_id }).lean<CampaignDoc>();

/** Stored `active` and not past its end: running, or waiting for its start. */
const notEnded = (now: Date) => ({ status: 'active', $or: [{ ends_at: null }, { ends_at: { $gt: now } }] });

/** The organization's campaigns running or waiting for their start (not those past their end). */
export const activeCampaigns = (organization_id: string, now = new Date()) =>
  Campaign.find({ organization_id, ...notEnded(now) }).lean<CampaignDoc[]>();

/** How many of the organization's campaigns are not ended, by hand or by date (the limit counts them). */
export const liveCampaignCount = (organization_id: string, now = new Date()) =>
  Campaign.countDocuments({
    organization_id,
    $or: [{ status: { $in: ['draft', 'paused'] } }, notEnded(now)],
  });

/** The stored filter of a status as readers see it (campaigns.ts statusOf). */
function statusFilter(status: string, now: Date): Record<string, unknown> {
  switch (status) {
    case 'scheduled':
      return { ...notEnded(now), starts_at: { $gt: now } };
    case 'active':
      return { ...notEnded(now), starts_at: { $lte: now } };
    case 'ended':
      return { $or: [{ status: 'ended' }, { status: 'active', ends_at: { $lte: now } }] };
    default:
      return { status };
  }
}

export const campaignsOf = (organization_id: string, status: string | null, limit: number, skip: number) =>
  Campaign.find({ organization_id, ...(status && statusFilter(status, new Date())) })
    .sort({ created_at: -1 })
    .skip(skip)
    .limit(limit)
    .lean<CampaignDoc[]>();

/** Writes an edit made on `version` (false when another edit got there first). */
export async function updateCampaign(
  organization_id: string,
  campaign_id: string,
  version: number,
  set: Partial<CampaignDoc>,
  budget_delta = 0,
): Promise<CampaignDoc | null> {
  return Campaign.findOneAndUpdate(
    { _id: campaign_id, organization_id, version },
    { $set: set, ...(budget_delta && { $inc: { budget_left: budget_delta } }) },
    { new: true },
  ).lean<CampaignDoc>();
}

export const insertCampaignVersion = (doc: CampaignVersionDoc) => insertOnce(CampaignVersion, { ...doc });

export const campaignVersions = (campaign_id: string) =>
  CampaignVersion.find({ campaign_id }).sort({ version: -1 }).lean<CampaignVersionDoc[]>();

export async function deleteCampaign(organization_id: string, campaign_id: string): Promise<boolean> {
  const res = await Campaign.deleteOne({ _id: campaign_id, organization_id, status: 'draft' });
  return res.deletedCount === 1;
}

// ---- budgets ----

/**
 * Takes up to `want` points of the budget: all of them when that much is left (one conditional
 * decrement), else what is left (read, then decremented only while it is still that). Answers
 * the points taken (0: nothing left) and whether this took the last of them.
 */
export async function takeBudget(campaign_id: string, want: number): Promise<{ taken: number; exhausted: boolean }> {
  const full = await Campaign.findOneAndUpdate(
    { _id: campaign_id, budget_left: { $gte: want } },
    { $inc: { budget_left: -want } },
    { new: true },
  ).lean<Pick<CampaignDoc, 'budget_left'>>();
  if (full) return { taken: want, exhausted: (full.budget_left ?? 0) <= 0 };
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const c = await Campaign.findById(campaign_id, { budget_left: 1 }).lean<Pick<CampaignDoc, 'budget_left'>>();
    const left = c?.budget_left ?? 0;
    if (left <= 0) return { taken: 0, exhausted: false };
    const take = Math.min(left, want);
    const res = await Campaign.updateOne({ _id: campaign_id, budget_left: left }, { $inc: { budget_left: -take } });
    if (res.modifiedCount === 1) return { taken: take, exhausted: take === left };
  }
  return { taken: 0, exhausted: false };
}

export async function returnBudget(campaign_id: string, points: number): Promise<void> {
  if (points > 0)
    await Campaign.updateOne({ _id: campaign_id, budget_left: { $ne: null } }, { $inc: { budget_left: points } });
}

// ---- per-member limits ----

/**
 * Takes one use of the member's limit in the window: answers false when `max` are used (the
 * filter then matches nothing and the upsert's insert collides with the document on `_id`).
 */
export async function takeUse(doc: Omit<CampaignUseDoc, 'used'>, max: number): Promise<boolean> {
  if (max <= 0) return false;
  // Two first uses at once both insert: the loser tries once more, on the document now there.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await CampaignUse.updateOne(
        { _id: doc._id, used: { $lt: max } },
        {
          $inc: { used: 1 },
          $setOnInsert: {
            organization_id: doc.organization_id,
            campaign_id: doc.campaign_id,
            user_id: doc.user_id,
            window: doc.window,
          },
        },
        { upsert: true },
      );
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }
  return false;
}

/** How many uses the document counts (0 when none). */
export const usesOf = async (_id: string) =>
  (await CampaignUse.findById(_id, { used: 1 }).lean<Pick<CampaignUseDoc, 'used'>>())?.used ?? 0;

/** Gives a use back (its award was not written). */
export async function returnUse(_id: string): Promise<void> {
  await CampaignUse.updateOne({ _id, used: { $gt: 0 } }, { $inc: { used: -1 } });
}

// ---- reports ----

/** Adds each day's totals (one bulk write of upserts). */
export async function addCampaignDays(
  days: Pick<CampaignDayDoc, '_id' | 'organization_id' | 'campaign_id' | 'day' | 'points' | 'awards' | 'returned'>[],
): Promise<void> {
  if (!days.length) return;
  await CampaignDay.bulkWrite(
    days.map((d) => ({
      updateOne: {
        filter: { _id: d._id },
        update: {
          $setOnInsert: { organization_id: d.organization_id, campaign_id: d.campaign_id, day: d.day },
          $inc: { points: d.points, awards: d.awards, returned: d.returned },
        },
        upsert: true,
      },
    })),
    { ordered: false },
  );
}

/** Records members reached (a member already recorded is refused by its `_id`, and that is all). */
export async function addCampaignMembers(docs: CampaignMemberDoc[]): Promise<void> {
  const out = await insertEach(CampaignMember.collection, docs as unknown as mongo.Document[]);
  for (const r of out) if (r !== true && !isDuplicateKey(r.error)) throw r.error;
}

export const campaignDays = (campaign_id: string) =>
  CampaignDay.find({ campaign_id }).sort({ day: 1 }).lean<CampaignDayDoc[]>();

export const campaignMemberCount = (campaign_id: string) => CampaignMember.countDocuments({ campaign_id });

export const campaignsOfMember = (organization_id: string, user_id: string) =>
  CampaignMember.find({ organization_id, user_id }).lean<CampaignMemberDoc[]>();

/** Moves the member's reach records to the tombstone (insert the new, then delete the old: never none). */
export async function tombstoneCampaignMembers(
  organization_id: string,
  user_id: string,
  tombstone: string,
): Promise<number> {
  const mine = await campaignsOfMember(organization_id, user_id);
  for (const m of mine) {
    await insertOnce(CampaignMember, { ...m, _id: `${m.campaign_id}|${tombstone}`, user_id: tombstone });
    await CampaignMember.deleteOne({ _id: m._id });
  }
  return mine.length;
}

// ---- one person's data ----

export const usesOfUser = (organization_id: string, user_id: string) =>
  CampaignUse.find({ organization_id, user_id }).lean<CampaignUseDoc[]>();

/** Replaces the user in their uses (their `_id` keeps the erased platform id, like the ledger's: never shown). */
export async function tombstoneUses(organization_id: string, user_id: string, tombstone: string): Promise<number> {
  const res = await CampaignUse.updateMany({ organization_id, user_id }, { $set: { user_id: tombstone } });
  return res.modifiedCount;
}
