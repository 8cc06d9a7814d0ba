/**
 * Reads and writes keyed by `_id`, the one lookup both database servers answer from an index
 * (see README.md here), and inserts under a unique key, the one write both keep exact when
 * several processes race.
 */
import mongoose, { type Model, Schema } from 'mongoose';

import { isDuplicateKey } from '../errors.ts';

// A helper over every model: mongoose's Model is invariant in its document type, so no other
// type takes them all (Model<unknown> refuses each model's own _id and document types).
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type AnyModel = Model<any>;

/**
 * A schema's `_id` taken from one of its own fields (a key's hash, a user's user_id), so the
 * lookup by that field is a lookup by `_id`. Documents inserted without an `_id` get it from the
 * field (inserts through the model, `insertMany` included).
 */
export function idFrom(field: string) {
  return {
    type: String,
    // An upsert calls defaults without a document (`this` null): its `_id` comes from the filter.
    default: function (this: Record<string, unknown> | null) {
      return this?.[field];
    },
  };
}

/**
 * `db_markers`: facts about the database that, once true, stay true (a collection without legacy
 * ids, a ledger whose entries all have their operation documents), one document each under its
 * name. A collection of its own, so a marker never shows in another collection's listings or
 * counts and no key of theirs can collide with it.
 */
const DbMarker = mongoose.model(
  'DbMarker',
  new Schema({ _id: { type: String, required: true }, at: Date }, { versionKey: false }),
  'db_markers',
);

/**
 * Whether the fact `name` holds, asked of the database: its marker answers with one `_id` read;
 * without one, `holds` is checked (possibly a costly query) and, when true, the marker is written
 * so no process checks again. Callers keep the answer per process.
 */
export async function markedOnce(name: string, holds: () => Promise<boolean>): Promise<boolean> {
  if (await DbMarker.exists({ _id: name })) return true;
  if (!(await holds())) return false;
  await insertOnce(DbMarker, { _id: name, at: new Date() });
  return true;
}

const unkeyed = new WeakMap<AnyModel, Promise<boolean>>();

/**
 * Whether the collection still holds documents written before its `_id` was taken from a field
 * (they carry an ObjectId). The `{_id: {$type}}` filter is a scan on FerretDB (seconds at 100,000
 * documents), so it runs only until it first finds none: the marker (named after the collection)
 * then answers every process with one `_id` read. New documents are always keyed, so the answer
 * never turns from false to true. A collection that still has such documents keeps the field
 * fallback (and is scanned once per process) until they are gone; nothing here re-keys them: they
 * leave when deleted, or when an operator rewrites them with their field's value as `_id`.
 */
export function hasUnkeyedDocuments(model: AnyModel): Promise<boolean> {
  let known = unkeyed.get(model);
  if (!known) {
    const noLegacy = async () =>
      (
        await model
          .find({ _id: { $type: 'objectId' } }, { _id: 1 })
          .limit(1)
          .lean()
          .exec()
      ).length === 0;
    known = markedOnce(model.collection.collectionName, noLegacy).then((keyed) => !keyed);
    known.catch(() => unkeyed.delete(model));
    unkeyed.set(model, known);
  }
  return known;
}

/**
 * The document whose keyed `_id` (see idFrom) is `value`, matching `extra` too; for a document
 * written before the key existed, by `field` (an indexed field) instead.
 */
export async function byKey<T>(
  model: AnyModel,
  field: string,
  value: string,
  extra: Record<string, unknown> = {},
  projection?: Record<string, 0 | 1>,
): Promise<T | null> {
  const doc = (await model
    .findOne({ _id: value, ...extra }, projection)
    .lean()
    .exec()) as T | null;
  if (doc || !(await hasUnkeyedDocuments(model))) return doc;
  return (await model
    .findOne({ [field]: value, ...extra }, projection)
    .lean()
    .exec()) as T | null;
}

/** The filter that names the keyed document `value` in updates and deletes (by `field` while unkeyed documents remain). */
export async function keyFilter(model: AnyModel, field: string, value: string): Promise<Record<string, string>> {
  return (await hasUnkeyedDocuments(model)) ? { [field]: value } : { _id: value };
}

/** The document with this `_id` as a plain object, or null. */
export async function byId<T>(model: AnyModel, _id: string, projection?: Record<string, 0 | 1>): Promise<T | null> {
  return (await model.findById(_id, projection).lean().exec()) as T | null;
}

/** Documents by `_id` (an `$in` on the primary key), keyed by `_id`; missing ones are absent. */
export async function byIds<T extends { _id: string }>(
  model: AnyModel,
  ids: readonly string[],
  projection?: Record<string, 0 | 1>,
): Promise<Map<string, T>> {
  if (!ids.length) return new Map();
  const docs = (await model
    .find({ _id: { $in: [...new Set(ids)] } }, projection)
    .lean()
    .exec()) as unknown as T[];
  return new Map(docs.map((d) => [d._id, d]));
}

/**
 * Inserts `doc` unless a document with the same unique key exists: true when this call wrote it,
 * false when it was there already (written before, or by a concurrent caller that won).
 */
export async function insertOnce(model: AnyModel, doc: Record<string, unknown>): Promise<boolean> {
  try {
    await model.create(doc);
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}
