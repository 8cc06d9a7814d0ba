/**
 * The embedded server (FerretDB on SQLite as setup builds it, patch 4) changes each document
 * atomically, as MongoDB does: concurrent `$inc`s all count, of concurrent conditional updates
 * exactly the ones the condition allows win, a delete never removes a document another client just
 * changed out of its filter, and concurrent upserts of one `_id` make one document. Without the
 * patch: 100 `$inc`s gave +12, 20 conditional updates by `_id` all won, upserts failed with E11000.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type PrivateFerret, startPrivateFerret } from '../helpers/ferretdb.ts';

let ferret: PrivateFerret | undefined;
const coll = (name: string) => ferret!.db.collection<{ _id: string; [k: string]: any }>(name);
const times = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

beforeAll(async () => {
  ferret = await startPrivateFerret();
});
afterAll(async () => ferret?.stop());

describe('single-document updates on the embedded server are atomic', () => {
  it('counts 100 concurrent $inc of 1, by _id and by an indexed field', async (ctx) => {
    if (!ferret) return ctx.skip();
    const c = coll('inc');
    await c.createIndex({ k: 1 });
    await c.insertOne({ _id: 'n', k: 'a', n: 0 });
    await times(100, () => c.updateOne({ _id: 'n' }, { $inc: { n: 1 } }));
    await times(100, () => c.updateOne({ k: 'a' }, { $inc: { n: 1 } }));
    await times(50, () => c.findOneAndUpdate({ k: 'a' }, { $inc: { n: 1 } }));
    expect((await c.findOne({ _id: 'n' }))?.n).toBe(250);
  });

  it('lets exactly one of 20 concurrent conditional updates win, by _id and by another field', async (ctx) => {
    if (!ferret) return ctx.skip();
    const c = coll('cond');
    await c.insertMany([
      { _id: 'a', state: 'open', k: 'x' },
      { _id: 'b', state: 'open', k: 'y' },
    ]);
    const byId = await times(20, (i) => c.updateOne({ _id: 'a', state: 'open' }, { $set: { state: `won-${i}` } }));
    const byField = await times(20, (i) => c.updateOne({ k: 'y', state: 'open' }, { $set: { state: `won-${i}` } }));
    expect(byId.filter((r) => r.modifiedCount === 1)).toHaveLength(1);
    expect(byField.filter((r) => r.modifiedCount === 1)).toHaveLength(1);
  });

  it('spends a balance guarded by $gte exactly as far as it goes', async (ctx) => {
    if (!ferret) return ctx.skip();
    const c = coll('balance');
    await c.insertOne({ _id: 'acct', balance: 30 });
    const res = await times(20, () => c.updateOne({ _id: 'acct', balance: { $gte: 10 } }, { $inc: { balance: -10 } }));
    expect(res.filter((r) => r.modifiedCount === 1)).toHaveLength(3);
    expect((await c.findOne({ _id: 'acct' }))?.balance).toBe(0);
  });

  it('hands each queued item to one of 30 concurrent claimers', async (ctx) => {
    if (!ferret) return ctx.skip();
    const c = coll('queue');
    await c.createIndex({ status: 1, at: 1 });
    await c.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: `job${i}`, status: 'ready', at: i })));
    const claims = await times(30, (i) =>
      c.findOneAndUpdate(
        { status: 'ready' },
        { $set: { status: 'taken', by: i } },
        { sort: { at: 1 }, returnDocument: 'after' },
      ),
    );
    const won = claims.filter((d) => d !== null).map((d) => d!._id);
    expect(won.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `job${i}`).sort());
    expect(await c.countDocuments({ status: 'taken' })).toBe(10);
  });

  it('never deletes a document another client moved out of the delete filter', async (ctx) => {
    if (!ferret) return ctx.skip();
    const c = coll('del');
    await c.createIndex({ k: 1 });
    await c.insertMany(Array.from({ length: 40 }, (_, i) => ({ _id: `d${i}`, k: 'd', v: 0 })));
    const [deleted, updated] = await Promise.all([
      c.deleteMany({ k: 'd', v: 0 }),
      times(40, (i) => c.updateOne({ _id: `d${i}` }, { $set: { v: 1 } })),
    ]);
    const left = await c.find({ k: 'd' }).toArray();
    expect(deleted.deletedCount + left.length).toBe(40);
    expect(left.every((d) => d.v === 1)).toBe(true);
    expect(updated.filter((r) => r.modifiedCount === 1).length).toBe(left.length);
  });

  it('deletes batches by _id $in whole (patch 7), each document once, beside updates and overlapping batches', async (ctx) => {
    if (!ferret) return ctx.skip();
    const c = coll('del-in');
    await c.insertMany(Array.from({ length: 60 }, (_, i) => ({ _id: `i${i}`, v: 0 })));
    // Six batches of 20 overlapping by half, in opposite orders, while every document is updated.
    const batches = Array.from({ length: 6 }, (_, b) => {
      const ids = Array.from({ length: 20 }, (_, k) => `i${(b * 10 + k) % 60}`);
      return b % 2 ? ids.reverse() : ids;
    });
    const [deleted] = await Promise.all([
      Promise.all(batches.map((ids) => c.deleteMany({ _id: { $in: ids } }))),
      times(60, (i) => c.updateOne({ _id: `i${i}` }, { $set: { v: 1 } })),
    ]);
    expect(deleted.reduce((n, r) => n + r.deletedCount, 0)).toBe(60);
    expect(await c.countDocuments({})).toBe(0);
    // One read of the batch, not one read and one reread per document.
    await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: `j${i}`, v: 0 })));
    const decoded = await ferret.metric('ferretdb_sqlite_rows_decoded_total');
    await c.deleteMany({ _id: { $in: Array.from({ length: 20 }, (_, i) => `j${i}`) } });
    expect((await ferret.metric('ferretdb_sqlite_rows_decoded_total')) - decoded).toBe(20);
    // Ids that do not exist, and none at all, delete nothing.
    expect((await c.deleteMany({ _id: { $in: ['nope', 'i1'] } })).deletedCount).toBe(0);
    expect((await c.deleteMany({ _id: { $in: [] } })).deletedCount).toBe(0);
    // With another condition the filter is decided per document, as before.
    await c.insertMany([
      { _id: 'x', v: 0 },
      { _id: 'y', v: 1 },
    ]);
    expect((await c.deleteMany({ _id: { $in: ['x', 'y'] }, v: 0 })).deletedCount).toBe(1);
    expect((await c.find({}).toArray()).map((d) => d._id)).toEqual(['y']);
  });

  it('makes one document of 20 concurrent upserts of one _id', async (ctx) => {
    if (!ferret) return ctx.skip();
    const c = coll('upsert');
    await times(20, () => c.updateOne({ _id: 'u' }, { $inc: { n: 1 } }, { upsert: true }));
    expect(await c.countDocuments({})).toBe(1);
    expect((await c.findOne({ _id: 'u' }))?.n).toBe(20);
  });
});
