import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant } from '../helpers/api.ts';

describe('search history (/carina)', () => {
  it('searches brands, products, venues, gifts and the user’s texts of the organization, and records it', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const user = await basicUser(t);
    const brand = (
      await call('POST', '/retail/admin/brands', {
        key: t.adminKey,
        json: { name: 'Andes Coffee', description: 'Single origin coffee roasters' },
      })
    ).body.brand;
    await call('POST', '/retail/admin/products', {
      key: t.adminKey,
      json: { name: 'Coffee Beans 1kg', brand_id: brand.id, barcode: '4006381333931' },
    });
    await call('POST', '/retail/admin/products', { key: t.adminKey, json: { name: 'Green Tea', brand_id: brand.id } });
    await call('POST', '/retail/admin/venues', {
      key: t.adminKey,
      json: { name: 'Coffee Corner', address: '1 Bean Street', latitude: 1, longitude: 1 },
    });
    await call('POST', '/api/gifts/gifts', {
      key: t.adminKey,
      json: {
        gift_name: 'Coffee voucher',
        gift_type: 'electronic_pins',
        supplier: 'Andes',
        electronic_pin_amount: 5,
        points_value: 500,
      },
    });
    await call('POST', '/retail/admin/brands', { key: other.adminKey, json: { name: 'Other Coffee' } });
    const conversation_id = (
      await call('POST', '/initialize_session', { key: user.key, json: { user_id: user.user_id } })
    ).body.conversation_id;
    await call('POST', '/process_text', {
      key: user.key,
      json: { text: 'My coffee order arrived cold this morning.', user_id: user.user_id, conversation_id },
    });
    const form = new FormData();
    for (const [k, v] of Object.entries({ user_id: user.user_id, session_id: 's', conversation_id })) form.append(k, v);
    form.append(
      'file',
      new Blob(['Receipt\nCoffee Corner\n2 x Flat white 7.00\nTotal 7.00\nThank you for shopping!']),
      'coffee-receipt.txt',
    );
    expect((await call('POST', '/process_document', { key: user.key, form })).status).toBe(200);

    const res = await call('POST', '/carina/search', {
      key: user.key,
      json: { idp_id: user.idp_id, organization_id: t.organization_id, query: 'coffee' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.results.search_data;
    expect(data.brands.map((b: any) => b.name)).toEqual(['Andes Coffee']);
    expect(data.products.map((p: any) => p.name)).toEqual(['Coffee Beans 1kg']);
    expect(data.venues.map((v: any) => v.name)).toEqual(['Coffee Corner']);
    expect(data.gifts.map((g: any) => g.gift_name)).toEqual(['Coffee voucher']);
    expect(data.texts).toHaveLength(1);
    expect(data.documents.map((d: any) => d.filename)).toEqual(['coffee-receipt.txt']);
    expect(data.documents[0]).toMatchObject({ folder: 'Receipts', category: 'receipts' });
    expect(data.total).toBe(6);
    expect(res.body).toMatchObject({
      success: true,
      idp_id: user.idp_id,
      organization_id: t.organization_id,
      query: 'coffee',
      id: expect.stringMatching(/^srch_/),
    });
    const byBarcode = await call('POST', '/carina/search', {
      key: user.key,
      json: { idp_id: user.idp_id, organization_id: t.organization_id, query: '4006381333931' },
    });
    expect(byBarcode.body.results.search_data.products.map((p: any) => p.name)).toEqual(['Coffee Beans 1kg']);
  });

  it('keeps history newest first, moves a repeated query to the top, filters by date, deletes and clears; per user', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    const other = await basicUser(t);
    const search = (query: string, u = user) =>
      call('POST', '/carina/search', {
        key: u.key,
        json: { idp_id: u.idp_id, organization_id: t.organization_id, query },
      });
    const history = async (extra = '', u = user) =>
      (
        await call('GET', `/carina/search-results?idp_id=${u.idp_id}&organization_id=${t.organization_id}${extra}`, {
          key: u.key,
        })
      ).body;
    for (const q of ['tea', 'coffee', 'milk']) {
      await search(q);
      await new Promise((r) => setTimeout(r, 5));
    }
    await search('  TEA ');
    await search('juice', other);
    const h = await history();
    expect(Array.isArray(h)).toBe(true);
    expect(h.map((r: any) => r.query)).toEqual(['TEA', 'milk', 'coffee']); // one entry per normalized query, moved to the top
    expect(h[0]).toMatchObject({
      idp_id: user.idp_id,
      organization_id: t.organization_id,
      results: { search_data: expect.any(Object) },
      created_at: expect.any(String),
    });
    expect((await history(`&from_date=${encodeURIComponent(h[1].created_at)}`)).map((r: any) => r.query)).toEqual([
      'TEA',
      'milk',
    ]);
    expect(await history('&to_date=2000-01-01')).toEqual([]);
    expect(
      (
        await call('GET', `/carina/search-results?idp_id=${other.idp_id}&organization_id=${t.organization_id}`, {
          key: user.key,
        })
      ).status,
    ).toBe(403);
    expect((await call('GET', `/carina/search-results?idp_id=${user.idp_id}`, { key: user.key })).status).toBe(422);

    expect(
      (
        await call(
          'DELETE',
          `/carina/search-results/${h[1].id}?idp_id=${user.idp_id}&organization_id=${t.organization_id}`,
          { key: user.key },
        )
      ).status,
    ).toBe(200);
    expect((await history()).map((r: any) => r.query)).toEqual(['TEA', 'coffee']);
    expect(
      (
        await call(
          'DELETE',
          `/carina/search-results/${h[1].id}?idp_id=${user.idp_id}&organization_id=${t.organization_id}`,
          { key: user.key },
        )
      ).status,
    ).toBe(404);
    const cleared = await call(
      'DELETE',
      `/carina/search-results?idp_id=${user.idp_id}&organization_id=${t.organization_id}`,
      { key: user.key },
    );
    expect(cleared.body).toEqual({ success: true, deleted: 2 });
    expect(await history()).toEqual([]);
    expect((await history('', other)).map((r: any) => r.query)).toEqual(['juice']);
    expect((await search('   ')).status).toBe(422);
  });
});
