/**
 * The search history store: the one file that reads and writes `search_history`. An entry's `_id`
 * is `<organization_id>|<user_id>|<hash of the normalized query>`, so recording a query again is a
 * replace by primary key; a user's history is read on the (organization_id, user_id, created_at)
 * index, and at most HISTORY_LIMIT entries per user are kept.
 */
import mongoose, { Schema } from 'mongoose';

const searchRecordSchema = new Schema(
  {
    /** `<organization_id>|<user_id>|<sha256 of the normalized query>` */
    _id: { type: String, required: true },
    id: { type: String, required: true, unique: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    idp_id: { type: String, required: true },
    query: { type: String, required: true },
    /** JSON text of the results (any keys survive FerretDB) */
    search_data_json: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
searchRecordSchema.index({ organization_id: 1, user_id: 1, created_at: -1 });

export interface SearchRecordDoc {
  _id: string;
  id: string;
  organization_id: string;
  user_id: string;
  idp_id: string;
  query: string;
  search_data_json: string;
  created_at: Date;
}

const SearchRecord = mongoose.model<SearchRecordDoc>('SearchRecord', searchRecordSchema, 'search_history');

/** Writes the entry and drops the user's entries beyond the newest `keep`. */
export async function saveRecord(doc: SearchRecordDoc, keep: number): Promise<void> {
  await SearchRecord.replaceOne({ _id: doc._id }, doc, { upsert: true });
  const extra = await SearchRecord.find({ organization_id: doc.organization_id, user_id: doc.user_id }, { _id: 1 })
    .sort({ created_at: -1 })
    .skip(keep)
    .lean<Array<{ _id: string }>>();
  if (extra.length) await SearchRecord.deleteMany({ _id: { $in: extra.map((e) => e._id) } });
}

export async function userRecords(
  organization_id: string,
  user_id: string,
  range: { from?: Date; to?: Date },
  limit: number,
): Promise<SearchRecordDoc[]> {
  const created_at =
    range.from || range.to
      ? { ...(range.from ? { $gte: range.from } : {}), ...(range.to ? { $lte: range.to } : {}) }
      : undefined;
  return SearchRecord.find({ organization_id, user_id, ...(created_at ? { created_at } : {}) })
    .sort({ created_at: -1 })
    .limit(limit)
    .lean<SearchRecordDoc[]>();
}

/** false: no such entry of this user */
export async function deleteRecord(organization_id: string, user_id: string, id: string): Promise<boolean> {
  return ((await SearchRecord.deleteOne({ organization_id, user_id, id })).deletedCount ?? 0) > 0;
}

export async function deleteUserRecords(organization_id: string, user_id: string): Promise<number> {
  return (await SearchRecord.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
}

/** Every entry of the user (a user's export), newest first, on the (organization_id, user_id, created_at) index. */
export async function allUserRecords(organization_id: string, user_id: string): Promise<SearchRecordDoc[]> {
  return SearchRecord.find({ organization_id, user_id }).sort({ created_at: -1 }).lean<SearchRecordDoc[]>();
}
