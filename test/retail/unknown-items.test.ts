/**
 * What the catalogue lacks: barcodes looked up that no product has and receipt lines no product
 * matched, counted per organization and ranked for its admins (GET /retail/admin/unknown-items).
 */
import { describe, expect, it } from 'vitest';

import { basicUser, call, fileForm, newTenant } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { groceries, shop } from '../helpers/shop.ts';

const list = (key: string, q = '') => call('GET', `/retail/admin/unknown-items${q}`, { key });

describe('unknown items', () => {
  it('counts barcodes no product has, most seen first, a person once a day; a product given the barcode drops it', async () => {
    const t = await newTenant();
    const [a, b, c] = [await basicUser(t), await basicUser(t), await basicUser(t)];
    const lookup = (key: string, code: string) =>
      call('GET', `/retail/products/by-barcode/${encodeURIComponent(code)}`, { key });

    expect((await lookup(a.key, '4006381333931')).status).toBe(404);
    expect((await lookup(a.key, '4006381333931')).status).toBe(404); // the same person again: not counted
    expect((await lookup(b.key, '4006381333931')).status).toBe(404);
    expect((await lookup(c.key, 'ABC-123')).status).toBe(404);
    // a nearby search for an unknown barcode is a lookup too (its UPC/EAN forms share one key)
    const nearby = await call('GET', '/retail/venues/nearby?latitude=39.8&longitude=-89.64&barcode=04006381333931', {
      key: c.key,
    });
    expect(nearby.status).toBe(404);

    const ranked = await list(t.adminKey);
    expect(ranked.status).toBe(200);
    expect(ranked.body).toMatchObject({ success: true, total: 2, page: 1, limit: 50, has_more: false });
    expect(ranked.body.items.map((i: any) => [i.kind, i.key, i.count])).toEqual([
      ['barcode', '04006381333931', 3],
      ['barcode', 'code:ABC-123', 1],
    ]);
    const [top] = ranked.body.items;
    expect(Date.parse(top.first_seen)).toBeLessThanOrEqual(Date.parse(top.last_seen));

    const second = await list(t.adminKey, '?limit=1&page=2');
    expect(second.body).toMatchObject({ total: 2, has_more: false, items: [{ key: 'code:ABC-123' }] });
    expect((await list(t.adminKey, '?kind=receipt_line')).body).toMatchObject({ items: [], total: 0 });

    // the admin adds the product (as its UPC-less EAN-13): it no longer lacks
    const brand = (await call('POST', '/retail/admin/brands', { key: t.adminKey, json: { name: 'Staedtler' } })).body
      .brand;
    const made = await call('POST', '/retail/admin/products', {
      key: t.adminKey,
      json: { name: 'Pencil HB', brand_id: brand.id, barcode: '4006381333931' },
    });
    expect(made.status).toBe(201);
    expect((await lookup(a.key, '4006381333931')).status).toBe(200);
    expect((await list(t.adminKey)).body.items.map((i: any) => i.key)).toEqual(['code:ABC-123']);
  });

  it('counts concurrent first sightings of one code by different people each once, in one entry', async () => {
    const t = await newTenant();
    const users = await Promise.all(Array.from({ length: 8 }, () => basicUser(t)));
    const answers = await Promise.all(
      users.map((u) => call('GET', '/retail/products/by-barcode/5901234123457', { key: u.key })),
    );
    expect(answers.map((r) => r.status)).toEqual(users.map(() => 404));
    expect((await list(t.adminKey)).body.items.map((i: any) => [i.key, i.count])).toEqual([['05901234123457', 8]]);
  });

  it("is for the organization's admins only: a basic key 403, another organization sees its own list", async () => {
    const t = await newTenant();
    const other = await newTenant();
    const user = await basicUser(t);
    expect((await call('GET', '/retail/products/by-barcode/96385074', { key: user.key })).status).toBe(404);

    const refused = await list(user.key);
    expect(refused.status).toBe(403);
    expect((await list(other.adminKey)).body).toMatchObject({ items: [], total: 0 });
    expect((await list(other.adminKey, `?organization_id=${t.organization_id}`)).status).toBe(403);
    // another organization's lookups of the same code are counted in its own list only
    const theirs = await basicUser(other);
    expect((await call('GET', '/retail/products/by-barcode/96385074', { key: theirs.key })).status).toBe(404);
    expect((await list(t.adminKey)).body.items.map((i: any) => [i.key, i.count])).toEqual([['00000096385074', 1]]);
  });

  it('refuses bad input with a 4xx naming the field and counts nothing for it', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const bad = await list(t.adminKey, '?kind=sku');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^kind/);
    expect((await list(t.adminKey, '?limit=0')).status).toBe(422);
    expect((await list(t.adminKey, '?limit=101')).status).toBe(422);
    // a code no retailer prints is refused, not counted
    const tooLong = await call('GET', `/retail/products/by-barcode/${'9'.repeat(65)}`, { key: user.key });
    expect(tooLong.status).toBe(422);
    const control = await call('GET', `/retail/products/by-barcode/${encodeURIComponent('ab\u0001cd')}`, {
      key: user.key,
    });
    expect(control.status).toBe(422);
    expect((await list(t.adminKey)).body).toMatchObject({ items: [], total: 0 });
  });

  it("counts a scanned receipt's lines no product matched, by their item name, without the matched ones", async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    const spec = groceries('2026-11-18');
    spec.items.push({ name: 'Dragon Fruit Exotic', price: 4.5 });
    const image = await renderReceipt(spec);
    const res = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({}, { data: image, name: 'receipt.png', type: 'image/png' }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const lines = await list(s.t.adminKey, '?kind=receipt_line');
    expect(lines.status).toBe(200);
    const keys = lines.body.items.map((i: any) => i.key);
    expect(
      keys.some((k: string) => /dragon/.test(k)),
      JSON.stringify(keys),
    ).toBe(true);
    for (const i of lines.body.items) {
      expect(i).toMatchObject({ kind: 'receipt_line', count: 1 });
      expect(i.key).toMatch(/^[a-z0-9# ]{1,60}$/);
      expect(i.key).not.toMatch(/milk|bread|banana|cola/);
    }
  }, 120_000);
});
