/**
 * Store part of `npm run bench`: what one command costs on the database server the platform runs
 * on (the embedded FerretDB by default), beside the wire's own round trip, and how many rows the
 * server decoded per document its filters matched over the whole bench (from its metrics).
 */
import mongoose from 'mongoose';

const DOCS = Number(process.env.BENCH_STORE_DOCS ?? 100_000);
const OPS = Number(process.env.BENCH_STORE_OPS ?? 3_000);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await op(i);
    ms.push(performance.now() - t);
  }
  return ms;
}

/** Sequential single-connection latencies: ping, a read by `_id` among DOCS documents, an insert. */
export async function benchStore(mongoUri: string) {
  const uri = new URL(mongoUri);
  uri.pathname = '/bench_store';
  const client = await new mongoose.mongo.MongoClient(uri.toString(), { maxPoolSize: 1 }).connect();
  try {
    const db = client.db();
    const docs = db.collection<{ _id: string }>('docs');
    const body = {
      organization_id: 'org_bench',
      user_id: 'usr_bench',
      reason: 'purchase',
      amount: 10,
      balance_after: 100,
      created_at: new Date(),
      note: 'x'.repeat(120),
    };
    for (let i = 0; i < DOCS; i += 5_000)
      await docs.insertMany(
        Array.from({ length: Math.min(5_000, DOCS - i) }, (_, j) => ({ _id: `doc_${i + j}`, ...body })),
      );
    const warm = await timed(200, () => db.command({ ping: 1 }));
    void warm;
    const ping = await timed(OPS, () => db.command({ ping: 1 }));
    const read = await timed(OPS, (i) => docs.findOne({ _id: `doc_${(i * 7919) % DOCS}` }));
    const insert = await timed(OPS, (i) => db.collection('inserts').insertOne({ _id: `ins_${i}`, ...body } as never));
    await db.dropDatabase();
    const row = (name: string, xs: number[]) => `| ${name} | ${pct(xs, 50).toFixed(2)} | ${pct(xs, 99).toFixed(2)} |`;
    return {
      lines: [
        `Store: one connection, ${OPS} sequential commands each, ${DOCS.toLocaleString('en')} documents in the read collection`,
        '| command | p50 ms | p99 ms |',
        '|---|---:|---:|',
        row('ping (the wire round trip)', ping),
        row('find one by _id', read),
        row('insert one', insert),
      ],
      pingP50: pct(ping, 50),
      readP50: pct(read, 50),
      insertP50: pct(insert, 50),
    };
  } finally {
    await client.close();
  }
}

/** Rows the embedded server decoded per document its filters matched, since it started. */
export async function decodedPerMatched(metricsUrl: string | undefined): Promise<number | undefined> {
  if (!metricsUrl) return undefined;
  const text = await (await fetch(metricsUrl)).text();
  const value = (name: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`${name} `))
        ?.split(' ')[1],
    );
  const decoded = value('ferretdb_sqlite_rows_decoded_total');
  const matched = value('ferretdb_handler_documents_matched_total');
  return Number.isFinite(decoded) && matched > 0 ? decoded / matched : undefined;
}
