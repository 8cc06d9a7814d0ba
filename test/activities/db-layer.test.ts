/**
 * activities/core/db against the suite's real MongoDB-wire server: inserts under a unique key tell who
 * was first, documents keyed by a field are read
 * by `_id` while documents written before the key existed are still found, and JSON-text fields
 * and the cache behave as the stores rely on.
 */
import mongoose, { Schema } from 'mongoose';
import { beforeAll, describe, expect, it } from 'vitest';

import {
  byKey,
  Cache,
  hasUnkeyedDocuments,
  idFrom,
  insertOnce,
  jsonText,
  keyFilter,
  versionsOf,
} from '../../activities/core/db/index.ts';
import { queriesOf, show } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

const Slot = mongoose.model(
  'DbTestSlot',
  new Schema({ _id: String, taker: String }, { versionKey: false }),
  'db_test_slots',
);
const Keyed = mongoose.model(
  'DbTestKeyed',
  new Schema({ _id: idFrom('name'), name: { type: String, unique: true }, n: Number }, { versionKey: false }),
  'db_test_keyed',
);
const Fresh = mongoose.model(
  'DbTestFresh',
  new Schema({ _id: idFrom('name'), name: { type: String, unique: true } }, { versionKey: false }),
  'db_test_fresh',
);

useSuiteRuntime();

beforeAll(async () => {
  await Promise.all([Slot.createIndexes(), Keyed.createIndexes(), Fresh.createIndexes()]);
});

describe('inserts under a unique key', () => {
  it('tells the first insert from a repeat', async () => {
    const _id = `once${Date.now()}`;
    const answers = await Promise.all(Array.from({ length: 10 }, () => insertOnce(Slot, { _id, taker: 'x' })));
    expect(answers.filter(Boolean)).toHaveLength(1);
  });
});

describe('documents keyed by a field', () => {
  it('takes _id from the field on create and insertMany, and reads by it', async () => {
    const name = `k${Date.now()}`;
    await Keyed.create({ name, n: 1 });
    await Keyed.insertMany([{ name: `${name}-b`, n: 2 }]);
    expect(await Keyed.exists({ _id: name })).not.toBeNull();
    expect(await byKey<{ n: number }>(Keyed, 'name', `${name}-b`)).toMatchObject({ _id: `${name}-b`, n: 2 });
  });

  it('still finds and updates a document written with an ObjectId _id', async () => {
    const name = `legacy${Date.now()}`;
    await Keyed.collection.insertOne({ _id: new mongoose.Types.ObjectId() as never, name, n: 7 });
    expect(await hasUnkeyedDocuments(Keyed)).toBe(true);
    expect(await byKey<{ n: number }>(Keyed, 'name', name)).toMatchObject({ name, n: 7 });
    await Keyed.updateOne(await keyFilter(Keyed, 'name', name), { $set: { n: 8 } });
    expect((await Keyed.collection.findOne({ name }))?.n).toBe(8);
  });

  it('reads a collection without such documents by _id alone', async () => {
    await Fresh.create({ name: `f${Date.now()}` });
    expect(await hasUnkeyedDocuments(Fresh)).toBe(false);
    expect(await keyFilter(Fresh, 'name', 'x')).toEqual({ _id: 'x' });
  });

  it('scans for such documents once per database: a marker then answers by _id, and never while one remains', async () => {
    const markers = mongoose.connection.collection('db_markers');
    const schema = () => new Schema({ _id: idFrom('name'), name: String }, { versionKey: false });
    // A second model over the same collection has its own per-process answer: it stands for a new process.
    const legacyName = `db_test_marker_legacy_${Date.now()}`;
    const Legacy = mongoose.model(`DbTestMarkerLegacy${Date.now()}`, schema(), legacyName);
    await Legacy.create({ name: 'keyed' });
    await Legacy.collection.insertOne({ _id: new mongoose.Types.ObjectId() as never, name: 'old' });
    expect(await hasUnkeyedDocuments(Legacy)).toBe(true);
    expect(await markers.findOne({ _id: legacyName as never })).toBeNull();
    const LegacyAgain = mongoose.model(`DbTestMarkerLegacyAgain${Date.now()}`, schema(), legacyName);
    expect(await hasUnkeyedDocuments(LegacyAgain)).toBe(true);
    expect(await markers.findOne({ _id: legacyName as never })).toBeNull();

    const cleanName = `db_test_marker_clean_${Date.now()}`;
    const Clean = mongoose.model(`DbTestMarkerClean${Date.now()}`, schema(), cleanName);
    await Clean.create({ name: 'keyed' });
    const first = await queriesOf(async () => expect(await hasUnkeyedDocuments(Clean)).toBe(false));
    expect(show(first).some((q) => q.includes('$type'))).toBe(true);
    expect(await markers.findOne({ _id: cleanName as never })).not.toBeNull();
    // the marker lives outside the collection: its listings and counts do not see it
    expect(await Clean.countDocuments({})).toBe(1);
    const CleanAgain = mongoose.model(`DbTestMarkerCleanAgain${Date.now()}`, schema(), cleanName);
    const second = await queriesOf(async () => expect(await hasUnkeyedDocuments(CleanAgain)).toBe(false));
    expect(show(second)).toEqual([`db_markers.findOne(${JSON.stringify({ _id: cleanName })})`]);
  });
});

describe('JSON-text fields and the cache', () => {
  it('reads bad or missing JSON text as the fallback', () => {
    const codec = jsonText<{ a: number }>({ a: 0 });
    expect(codec.decode(codec.encode({ a: 3 }))).toEqual({ a: 3 });
    expect(codec.decode('{not json')).toEqual({ a: 0 });
    expect(codec.decode(null)).toEqual({ a: 0 });
  });

  it('serves an entry for its time to live only, null values included, and stays bounded', async () => {
    const cache = new Cache<string, number | null>({ max: 3, ttlMs: 100 });
    cache.set('none', null);
    expect(cache.has('none')).toBe(true);
    expect(cache.get('none')).toBeNull();
    for (const k of ['a', 'b', 'c', 'd']) cache.set(k, 1);
    expect(cache.size).toBe(3);
    await new Promise((r) => setTimeout(r, 150));
    expect(cache.get('d')).toBeUndefined();
  });
});

describe('versions of what processes keep in memory', () => {
  it("hears another process's move within about a second, reading at most once a second however often asked", async () => {
    const org = `org_versions_${Date.now()}`;
    const moves: number[] = [];
    const here = versionsOf('test.memory', (o, v) => {
      if (o === org) moves.push(v);
    });
    const elsewhere = versionsOf('test.memory', () => undefined);
    await here.heed(org); // the first time: waited for
    const reads = await queriesOf(async () => {
      for (let i = 0; i < 200; i += 1) expect(here.heed(org)).toBeUndefined();
    });
    expect(reads.filter((q) => q.collection === 'memory_versions')).toEqual([]);
    await elsewhere.move(org);
    const began = Date.now();
    while (moves.length < 2 && Date.now() - began < 3000) {
      void here.heed(org);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(moves).toEqual([0, 1]); // the first version read counts as a move (nothing kept before it stays)
    expect(await here.current(org)).toBe(1);
  });
});
