/**
 * The embedded default (FerretDB 1.24 on SQLite, built by setup with tools/patches) answers
 * `_id` filters, updates and deletes from its `_id` index: the SQLite plan is an index search and
 * the cost of a lookup does not grow with the collection. Against mongod or another server the
 * tests are skipped: they check FerretDB's own query plans.
 */
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

type Db = ReturnType<mongoose.mongo.MongoClient['db']>;

let client: mongoose.mongo.MongoClient;
let db: Db;
/** Why the tests cannot run here, or '' on FerretDB with SQLite. */
let notHere = '';

beforeAll(async () => {
  client = await new mongoose.mongo.MongoClient(inject('platformEnv').MONGODB_URI!).connect();
  db = client.db(`id_index_${Date.now()}`);
  const info = await db.admin().command({ buildInfo: 1 });
  if (!info.ferretdbVersion)
    notHere = `the suite runs against MongoDB ${info.version}, not FerretDB: its plans are not SQLite's`;
  else {
    await db.collection('probe').insertOne({ _id: 'x' } as never);
    const plan = (await db.command({ explain: { find: 'probe', filter: {} } })).queryPlanner?.Plan;
    if (!Array.isArray(plan)) notHere = `FerretDB ${info.ferretdbVersion} here does not run on SQLite`;
  }
  if (notHere) process.stderr.write(`ferretdb-id-index: skipped, ${notHere}\n`);
});

afterAll(async () => {
  await db?.dropDatabase().catch(() => {});
  await client?.close();
});

/** Documents shaped like ledger entries, inserted in batches. */
async function seed(name: string, count: number) {
  const coll = db.collection<{ _id: string; organization_id: string; seq: number }>(name);
  for (let i = 0; i < count; i += 5_000) {
    await coll.insertMany(
      Array.from({ length: Math.min(5_000, count - i) }, (_, j) => {
        const seq = i + j;
        return {
          _id: `org_1|user_${seq % 997}|${seq}`,
          organization_id: 'org_1',
          user_id: `user_${seq % 997}`,
          seq,
          amount: 10,
          balance_after: seq * 10,
          reason: 'purchase',
        };
      }),
    );
  }
  return coll;
}

const idOf = (seq: number) => `org_1|user_${seq % 997}|${seq}`;

async function plan(collection: string, filter: object) {
  const res = await db.command({ explain: { find: collection, filter } });
  return { pushdown: res.filterPushdown as boolean, plan: (res.queryPlanner.Plan as string[]).join(' | ') };
}

async function elapsed(fn: () => Promise<unknown>) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('FerretDB answers _id from its index', () => {
  it('plans an index search for _id filters: plain, with other fields, $eq and $in', async ({ skip }) => {
    skip(!!notHere, notHere);
    await seed('plans', 200);
    for (const filter of [
      { _id: idOf(7) },
      { _id: idOf(7), organization_id: 'org_1' },
      { _id: { $eq: idOf(7) } },
      { _id: { $in: [idOf(7), idOf(8)] } },
    ]) {
      const { pushdown, plan: text } = await plan('plans', filter);
      expect(pushdown, `pushed down: ${JSON.stringify(filter)}`).toBe(true);
      expect(text, `plan of ${JSON.stringify(filter)}`).toMatch(/SEARCH \S+ USING INDEX \S+__id_ /);
      expect(text, `plan of ${JSON.stringify(filter)}`).not.toMatch(/\bSCAN\b/);
    }
    // A filter without an _id equality is still answered by a scan (and filtered by FerretDB).
    expect((await plan('plans', { organization_id: 'org_1' })).plan).toMatch(/\bSCAN\b/);
  });

  it('returns every document MongoDB would for _id values that are awkward in JSON', async ({ skip }) => {
    skip(!!notHere, notHere);
    const ids: Array<string | number | mongoose.mongo.ObjectId> = [
      'a"b',
      'a\\b',
      '<&>',
      '\u2028',
      'é',
      'e\u0301',
      '😀',
      '\u0001',
      'tab\t',
      '',
      'x'.repeat(2_000),
      '{"$o":"x"}',
      new mongoose.mongo.ObjectId(),
      7,
    ];
    const coll = db.collection<{ _id: (typeof ids)[number]; i: number }>('awkward');
    await coll.insertMany(ids.map((_id, i) => ({ _id, i })));
    for (const [i, _id] of ids.entries()) {
      const found = {
        plain: (await coll.findOne({ _id }))?.i,
        withField: (await coll.findOne({ _id, i }))?.i,
        eq: (await coll.findOne({ _id: { $eq: _id } }))?.i,
        in: (await coll.find({ _id: { $in: [_id, 'absent'] } }).toArray()).map((d) => d.i),
        otherField: (await coll.findOne({ _id, i: i + 1 }))?.i,
        updated: (await coll.updateOne({ _id, i }, { $set: { seen: true } })).modifiedCount,
      };
      expect({ _id, ...found }).toEqual({
        _id,
        plain: i,
        withField: i,
        eq: i,
        in: [i],
        otherField: undefined,
        updated: 1,
      });
    }
    expect((await coll.deleteMany({ _id: { $in: ids } })).deletedCount).toBe(ids.length);
  });

  it(
    'finds, updates and deletes one document by _id at 50,000 documents within 3× of the cost at 500',
    { timeout: 300_000 },
    async ({ skip }) => {
      skip(!!notHere, notHere);
      const sizes = [500, 50_000] as const;
      const colls = await Promise.all(sizes.map((n) => seed(`cost_${n}`, n)));
      const runs = 25;
      const ops = {
        findOne: (c: (typeof colls)[number], n: number, r: number) =>
          c.findOne({ _id: idOf((r * 7_919) % (n - runs - 1)) }),
        updateOne: (c: (typeof colls)[number], n: number, r: number) =>
          c.updateOne({ _id: idOf((r * 7_919) % (n - runs - 1)) }, { $set: { reason: `r${r}` } }),
        // Each run deletes another document, from the end of the collection.
        deleteOne: (c: (typeof colls)[number], n: number, r: number) => c.deleteOne({ _id: idOf(n - 1 - r) }),
      };
      const report: Record<string, { p50_500: number; p50_50000: number; ratio: number }> = {};
      for (const [name, op] of Object.entries(ops)) {
        const times: number[][] = [[], []];
        // Alternating the sizes run by run puts both under the same load of the machine.
        for (let r = 0; r < runs; r++)
          for (const k of [0, 1]) times[k].push(await elapsed(() => op(colls[k], sizes[k], r)));
        const [small, large] = times.map(median);
        report[name] = { p50_500: +small.toFixed(2), p50_50000: +large.toFixed(2), ratio: +(large / small).toFixed(2) };
      }
      process.stderr.write(`ferretdb-id-index: ${JSON.stringify(report)}\n`);
      for (const [name, r] of Object.entries(report))
        expect(r.ratio, `${name}: ${JSON.stringify(r)}`).toBeLessThanOrEqual(3);
    },
  );
});
