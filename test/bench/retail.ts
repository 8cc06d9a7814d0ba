/**
 * Retail part of `npm run bench`: nearby-venue search over 100,000 venues (p50/p99 at 1 and 10
 * connections), and receipt scans for a venue of that organization (latency split into image, OCR,
 * matching and workflow overhead, plus accuracy on generated receipts whose items and totals are known).
 */
import autocannon from 'autocannon';

import { type ReceiptItemSpec, renderReceipt } from '../helpers/receipts.ts';

const GROCERIES: Array<[string, number]> = [
  ['Coca-Cola 330ml', 1.5],
  ['Organic Bananas 1kg', 1.99],
  ['Whole Milk 1L', 1.25],
  ['Sourdough Bread', 3.49],
  ['Free Range Eggs 12', 3.85],
  ['Cheddar Cheese 200g', 2.75],
  ['Greek Yogurt 500g', 2.2],
  ['Orange Juice 1L', 2.6],
  ['Basmati Rice 1kg', 2.95],
  ['Spaghetti 500g', 1.1],
  ['Tomato Sauce 400g', 1.35],
  ['Olive Oil 500ml', 5.4],
  ['Ground Coffee 250g', 4.5],
  ['Green Tea 20 bags', 2.1],
  ['Dark Chocolate 100g', 1.8],
  ['Salted Butter 250g', 2.3],
  ['Chicken Breast 500g', 5.99],
  ['Atlantic Salmon 240g', 6.5],
  ['Baby Spinach 200g', 1.7],
  ['Red Apples 6 pack', 2.4],
  ['Sparkling Water 1.5L', 0.9],
  ['Peanut Butter 340g', 2.65],
  ['Corn Flakes 500g', 2.99],
  ['Toilet Paper 9 rolls', 4.99],
  ['Dish Soap 500ml', 1.6],
  ['Potato Chips 150g', 1.95],
  ['Frozen Peas 1kg', 1.45],
  ['Honey 340g', 3.75],
  ['Oat Milk 1L', 1.9],
  ['Mozzarella 125g', 1.15],
];

export interface RetailBench {
  lines: string[];
  /** nearby search's p99 at 10 connections, ms (the store section's summary line) */
  nearbyP99?: number;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Seeded so every run scans the same receipts. */
function rng(seed: number) {
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
}

export async function benchRetail(
  base: string,
  adminKey: string,
  env: Record<string, string>,
  helloRps: number,
  seconds: number,
): Promise<RetailBench> {
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${base}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const lines: string[] = [];
  const random = rng(42);

  // --- nearby venues over 100,000 venues of the default organization ---
  const VENUES = Number(process.env.BENCH_VENUES ?? 100_000);
  const { importVenues } = await import('../../activities/retail/venues.ts');
  const center = { lat: 40.4168, lon: -3.7038 };
  const venues = Array.from({ length: VENUES }, (_, i) => ({
    name: `Venue ${i}`,
    address: `${i} Bench Street`,
    latitude: center.lat + (random() - 0.5) * 0.9,
    longitude: center.lon + (random() - 0.5) * 1.2,
  }));
  let t = performance.now();
  await importVenues('default', venues);
  lines.push(
    `Nearby venues: ${VENUES} venues imported in ${((performance.now() - t) / 1000).toFixed(1)} s, searchable at once (each process keeps the cells it has searched)`,
  );
  let nearbyP99: number | undefined;
  // The first searches read the cells of new ground (venue-cells.ts); the searches after them are
  // answered from the cells kept: both are reported.
  for (const [label, connections] of [
    ['first searches after the import', 10],
    ['ground searched before', 1],
    ['ground searched before', 10],
  ] as const) {
    const nearby = await autocannon({
      url: base,
      connections,
      duration: label.startsWith('first') ? 2 * seconds : seconds,
      requests: [
        {
          method: 'GET',
          headers,
          setupRequest: (req: any) => ({
            ...req,
            path: `/retail/venues/nearby?latitude=${(center.lat + (Math.random() - 0.5) * 0.8).toFixed(5)}&longitude=${(center.lon + (Math.random() - 0.5) * 1.1).toFixed(5)}&radius=5000`,
          }),
        },
      ],
    });
    if (connections === 10 && !label.startsWith('first')) nearbyP99 = nearby.latency.p99;
    lines.push(
      `| GET /retail/venues/nearby (5 km, ${VENUES} venues, ${connections} connection${connections > 1 ? 's' : ''}, ${label}) | ${nearby.requests.average.toFixed(0)} req/s | ${((nearby.requests.average / helloRps) * 100).toFixed(1)}% of hello-world | p50 ${nearby.latency.p50} ms | p99 ${nearby.latency.p99} ms | non-2xx ${nearby.non2xx} |`,
    );
  }

  // --- receipt scans ---
  const brand = (await post('/retail/admin/brands', { name: 'Bench Foods' })).brand;
  const venue = (
    await post('/retail/admin/venues', {
      name: 'Bench Market',
      address: '1 Scan Avenue, Testville',
      latitude: 10,
      longitude: 10,
    })
  ).venue;
  for (const [name, price] of GROCERIES) {
    const product = (await post('/retail/admin/products', { name, brand_id: brand.id })).product;
    await post(`/retail/admin/venues/${venue.id}/products`, { product_id: product.id, price, status: 'active' });
  }
  const RECEIPTS = Number(process.env.BENCH_RECEIPTS ?? 20);
  const total: number[] = [];
  const parts = { image: [] as number[], ocr: [] as number[], matching: [] as number[], overhead: [] as number[] };
  let itemsExpected = 0;
  let itemsFound = 0;
  let totalsFound = 0;
  let receiptsExact = 0;
  for (let i = 0; i < RECEIPTS + 2; i += 1) {
    const picked = [...GROCERIES].sort(() => random() - 0.5).slice(0, 3 + Math.floor(random() * 6));
    const items: ReceiptItemSpec[] = picked.map(([name, price]) => {
      const qty = random() < 0.3 ? 2 + Math.floor(random() * 3) : 1;
      return { name, qty, price: Math.round(price * qty * 100) / 100 };
    });
    const sum = Math.round(items.reduce((s, x) => s + x.price, 0) * 100) / 100;
    const day = String(1 + (i % 28)).padStart(2, '0');
    const image = await renderReceipt({
      merchant: 'Bench Market',
      address: '1 Scan Avenue, Testville',
      date: `2026-${String(1 + Math.floor(i / 28)).padStart(2, '0')}-${day}`,
      items,
      total: sum,
    });
    const form = new FormData();
    form.append('file', new Blob([image], { type: 'image/png' }), `r${i}.png`);
    form.append('user_id', `bench-scanner-${i}`);
    t = performance.now();
    const res = await fetch(`${base}/retail/receipts?venue_id=${venue.id}`, {
      method: 'POST',
      headers: { authorization: headers.authorization },
      body: form,
    });
    const scan = (await res.json()) as any;
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`receipt scan answered ${res.status}: ${JSON.stringify(scan)}`);
    if (i < 2) continue; // warm-up: the OCR engine loads on first use
    total.push(ms);
    parts.image.push(scan.timings.image_ms);
    parts.ocr.push(scan.timings.ocr_ms);
    parts.matching.push(scan.timings.matching_ms);
    parts.overhead.push(ms - scan.timings.image_ms - scan.timings.ocr_ms - scan.timings.matching_ms);
    const found = new Map<string, number>(scan.products.map((p: any) => [p.name, p.quantity]));
    let exact = found.size === items.length;
    for (const it of items) {
      itemsExpected += 1;
      if (found.get(it.name) === (it.qty ?? 1)) itemsFound += 1;
      else exact = false;
    }
    if (scan.receipt.total === sum) totalsFound += 1;
    else exact = false;
    if (exact) receiptsExact += 1;
  }
  lines.push('');
  lines.push(
    `Receipt scans (${RECEIPTS} sequential generated receipts, 3-8 items of ${GROCERIES.length} catalogue products, warm, the venue's organization holding ${VENUES} venues)`,
  );
  lines.push('| part | p50 ms | p99 ms |');
  lines.push('|---|---:|---:|');
  lines.push(`| whole request (POST /retail/receipts) | ${pct(total, 50).toFixed(0)} | ${pct(total, 99).toFixed(0)} |`);
  lines.push(`| image checks + thumbnail | ${pct(parts.image, 50).toFixed(0)} | ${pct(parts.image, 99).toFixed(0)} |`);
  lines.push(`| OCR (tesseract.js) | ${pct(parts.ocr, 50).toFixed(0)} | ${pct(parts.ocr, 99).toFixed(0)} |`);
  lines.push(
    `| matching (venue, products, duplicates, rules) | ${pct(parts.matching, 50).toFixed(0)} | ${pct(parts.matching, 99).toFixed(0)} |`,
  );
  lines.push(
    `| edge + workflow overhead (the rest) | ${pct(parts.overhead, 50).toFixed(0)} | ${pct(parts.overhead, 99).toFixed(0)} |`,
  );
  lines.push(
    `Accuracy: items found with the right quantity ${itemsFound}/${itemsExpected} (${((itemsFound / itemsExpected) * 100).toFixed(1)}%), totals read ${totalsFound}/${RECEIPTS}, receipts entirely right ${receiptsExact}/${RECEIPTS} (${((receiptsExact / RECEIPTS) * 100).toFixed(0)}%)`,
  );
  void env;
  lines.push('');
  const { compareOcrEngines } = await import('./ocr-engines.ts');
  lines.push(...(await compareOcrEngines()));
  return { lines, nearbyP99 };
}
