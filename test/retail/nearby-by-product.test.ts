/**
 * "Where can I buy this near me?": GET /retail/venues/nearby with `barcode` or `product_id`
 * answers only the venues selling that product (an on-sale mapping), nearest first, with the
 * venue's price and status.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

const at = { lat: 39.8, lon: -89.64 };
/** about `m` meters north of `at` */
const north = (m: number) => at.lat + m / 111_195;

let t: Tenant;
let user: { key: string };
let milk: number;
let bread: number;
const venue: Record<string, number> = {};

async function post(path: string, json: unknown) {
  const res = await call('POST', path, { key: t.adminKey, json });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const nearby = (q: string, key = user.key) =>
  call('GET', `/retail/venues/nearby?latitude=${at.lat}&longitude=${at.lon}&${q}`, { key });

beforeAll(async () => {
  t = await newTenant();
  user = await basicUser(t);
  const brand = (await post('/retail/admin/brands', { name: 'Dairy' })).brand;
  milk = (await post('/retail/admin/products', { name: 'Milk 1L', brand_id: brand.id, barcode: '036000291452' }))
    .product.id;
  bread = (await post('/retail/admin/products', { name: 'Rye bread', brand_id: brand.id })).product.id;
  for (const [name, m] of [
    ['Here', 0],
    ['Corner', 100],
    ['Sold out shop', 300],
    ['One km', 1000],
    ['Two km', 2000],
  ] as const)
    venue[name] = (await post('/retail/admin/venues', { name, latitude: north(m), longitude: at.lon })).venue.id;
  for (const [name, price, status] of [
    ['Here', 1.2, 'active'],
    ['Sold out shop', 0.9, 'Out of stock'],
    ['One km', 1.3, 'available'],
    ['Two km', 1.1, 'in_stock'],
  ] as const)
    await post(`/retail/admin/venues/${venue[name]}/products`, { product_id: milk, price, status });
});

describe('nearby venues selling a product', () => {
  it('by barcode (any of its forms) or product id: only on-sale venues, nearest first, with price and status', async () => {
    const byCode = await nearby('barcode=0036000291452&radius=5000');
    expect(byCode.status).toBe(200);
    expect(byCode.body).toMatchObject({ success: true, radius: 5000, engine: 'latitude-bands', product_id: milk });
    expect(byCode.body.venues.map((v: any) => [v.name, v.price, v.status])).toEqual([
      ['Here', 1.2, 'active'],
      ['One km', 1.3, 'available'],
      ['Two km', 1.1, 'in_stock'],
    ]);
    const distances = byCode.body.venues.map((v: any) => v.distance_m);
    expect(distances).toEqual([...distances].sort((a: number, b: number) => a - b));
    expect(distances[1]).toBeGreaterThan(950);
    expect(distances[1]).toBeLessThan(1050);

    const byId = await nearby(`product_id=${milk}&radius=1500`);
    expect(byId.body.venues.map((v: any) => v.name)).toEqual(['Here', 'One km']);
    expect((await nearby(`product_id=${milk}&limit=1`)).body.venues.map((v: any) => v.name)).toEqual(['Here']);

    // without a filter: every venue, without a product's price
    const all = await nearby('radius=5000');
    expect(all.body.venues.map((v: any) => v.name)).toEqual(['Here', 'Corner', 'Sold out shop', 'One km', 'Two km']);
    expect(all.body.venues[0].price).toBeUndefined();
    expect(all.body.product_id).toBeUndefined();
  });

  it('a product no venue sells answers an empty list; an unknown product or barcode is 404', async () => {
    expect((await nearby(`product_id=${bread}`)).body).toMatchObject({ success: true, venues: [], product_id: bread });
    const unknownCode = await nearby('barcode=4006381333931');
    expect(unknownCode.status).toBe(404);
    expect(unknownCode.body).toEqual({ detail: 'Resource not found' });
    expect((await nearby('product_id=999999999')).status).toBe(404);
  });

  it("another organization's product is not found, and its key sees none of these venues", async () => {
    const other = await newTenant();
    const theirs = await basicUser(other);
    expect((await nearby(`product_id=${milk}`, theirs.key)).status).toBe(404);
    expect((await nearby('barcode=036000291452', theirs.key)).status).toBe(404);
    expect((await nearby('radius=5000', theirs.key)).body.venues).toEqual([]);
    expect((await nearby(`product_id=${milk}&organization_id=${t.organization_id}`, other.adminKey)).status).toBe(403);
  });

  it('refuses bad input with 422 naming the field', async () => {
    const both = await nearby(`barcode=036000291452&product_id=${milk}`);
    expect(both.status).toBe(422);
    expect(both.body.detail).toMatch(/^barcode/);
    const long = await nearby(`barcode=${'1'.repeat(65)}`);
    expect(long.status).toBe(422);
    expect(long.body.detail).toMatch(/^barcode/);
    expect((await nearby('barcode=')).status).toBe(422);
    const notPrintable = await nearby(`barcode=${encodeURIComponent('ab\u0001')}`);
    expect(notPrintable.status).toBe(422);
    expect(notPrintable.body.detail).toMatch(/^barcode/);
    const id = await nearby('product_id=abc');
    expect(id.status).toBe(422);
    expect(id.body.detail).toMatch(/^product_id/);
  });
});
