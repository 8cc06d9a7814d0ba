import { describe, expect, inject, it } from 'vitest';

import { basicUser, call, newTenant, type Tenant } from '../helpers/api.ts';

async function post(t: Tenant, path: string, json: unknown) {
  const res = await call('POST', path, { key: t.adminKey, json });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('retail catalogue', () => {
  it('creates brands and products with integer ids; admin writes, key reads, organization isolation', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const user = await basicUser(t);
    const created = await call('POST', '/retail/admin/brands', {
      key: t.adminKey,
      json: { name: 'Acme', description: 'Everything', logo_url: 'https://cdn.example.com/acme.png' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      success: true,
      brand: { name: 'Acme', description: 'Everything', logo_url: 'https://cdn.example.com/acme.png', featured: false },
    });
    const brandId = created.body.brand.id;
    expect(Number.isInteger(brandId)).toBe(true);

    expect((await call('POST', '/retail/admin/brands', { key: user.key, json: { name: 'Nope' } })).status).toBe(403);
    expect((await call('GET', `/retail/brands/${brandId}`, { key: user.key })).body).toEqual({
      success: true,
      brand: created.body.brand,
    });
    expect((await call('GET', `/retail/brands/${brandId}`, { key: other.adminKey })).status).toBe(404);
    expect(
      (await call('GET', `/retail/brands/${brandId}?organization_id=${t.organization_id}`, { key: other.adminKey }))
        .status,
    ).toBe(403);

    const p1 = (
      await post(t, '/retail/admin/products', {
        name: 'Acme Cola 330ml',
        brand_id: brandId,
        description: 'can',
        barcode: '036000291452',
      })
    ).product;
    const p2 = (await post(t, '/retail/admin/products', { name: 'Acme Chips', brand_id: brandId, barcode: '96385074' }))
      .product;
    expect(p2.id).toBeGreaterThan(p1.id);
    expect(p1).toMatchObject({ name: 'Acme Cola 330ml', brand_id: brandId, barcode: '036000291452' });
    const listed = await call('GET', `/retail/brands/${brandId}/products`, { key: user.key });
    expect(listed.body.products.map((p: any) => p.id)).toEqual([p1.id, p2.id]);

    // unknown brand, bad id, duplicate barcode (UPC-A given again as its EAN-13 form)
    const badBrand = await call('POST', '/retail/admin/products', {
      key: t.adminKey,
      json: { name: 'X', brand_id: 999999999 },
    });
    expect(badBrand.status).toBe(422);
    expect(badBrand.body.detail).toMatch(/^brand_id/);
    expect((await call('GET', '/retail/brands/abc', { key: user.key })).status).toBe(422);
    const dup = await call('POST', '/retail/admin/products', {
      key: t.adminKey,
      json: { name: 'Copy', brand_id: brandId, barcode: '0036000291452' },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toContain(`product ${p1.id}`);

    // a brand with products cannot be deleted; a replaced product keeps its id
    expect((await call('DELETE', `/retail/admin/brands/${brandId}`, { key: t.adminKey })).status).toBe(409);
    const put = await call('PUT', `/retail/admin/products/${p2.id}`, {
      key: t.adminKey,
      json: { name: 'Acme Chips XL', brand_id: brandId },
    });
    expect(put.body.product).toMatchObject({ id: p2.id, name: 'Acme Chips XL', barcode: '' });
    expect((await call('DELETE', `/retail/admin/products/${p2.id}`, { key: t.adminKey })).status).toBe(200);
    expect((await call('GET', `/retail/products/${p2.id}`, { key: user.key })).status).toBe(404);
    const page = await call('GET', '/retail/products?limit=1&q=cola', { key: user.key });
    expect(page.body).toMatchObject({ success: true, total: 1, has_more: false, products: [{ id: p1.id }] });
  });

  it('finds products by barcode in every symbology; a wrong check digit flagged, any other code as given, unknown 404', async () => {
    const t = await newTenant();
    const brand = (await post(t, '/retail/admin/brands', { name: 'Codes' })).brand;
    const upcA = (
      await post(t, '/retail/admin/products', { name: 'UPC-A item', brand_id: brand.id, barcode: '036000291452' })
    ).product;
    const ean13 = (
      await post(t, '/retail/admin/products', { name: 'EAN item', brand_id: brand.id, barcode: '4006381333931' })
    ).product;
    const upcE = (
      await post(t, '/retail/admin/products', { name: 'UPC-E item', brand_id: brand.id, barcode: '04252614' })
    ).product;
    const ean8 = (
      await post(t, '/retail/admin/products', { name: 'EAN-8 item', brand_id: brand.id, barcode: '96385074' })
    ).product;
    const find = (code: string) =>
      call('GET', `/retail/products/by-barcode/${encodeURIComponent(code)}`, { key: t.adminKey });
    expect((await find('036000291452')).body.product).toMatchObject({ id: upcA.id, barcode_type: 'UPC-A' });
    expect((await find('0036000291452')).body.product).toMatchObject({ id: upcA.id, barcode_type: 'EAN-13' });
    expect((await find('4006381333931')).body.product.id).toBe(ean13.id);
    expect((await find('042100005264')).body.product).toMatchObject({ id: upcE.id, barcode_type: 'UPC-A' });
    expect((await find('04252614')).body.product.id).toBe(upcE.id);
    expect((await find('96385074')).body.product.id).toBe(ean8.id);
    expect(upcA.barcode_check_digit_valid).toBe(true);
    expect((await find('4006381333931')).body.product.barcode_check_digit_valid).toBe(true);

    // a wrong check digit is stored and answered, flagged; its UPC-A/EAN-13 forms still match
    const wrongCheck = (
      await post(t, '/retail/admin/products', { name: 'Shelf label typo', brand_id: brand.id, barcode: '036000291453' })
    ).product;
    expect(wrongCheck).toMatchObject({ barcode: '036000291453', barcode_check_digit_valid: false });
    expect((await find('0036000291453')).body.product).toMatchObject({
      id: wrongCheck.id,
      barcode_type: 'EAN-13',
      barcode_check_digit_valid: false,
    });
    const ean8Typo = (
      await post(t, '/retail/admin/products', { name: 'EAN-8 typo', brand_id: brand.id, barcode: '96385075' })
    ).product;
    expect((await find('96385075')).body.product).toMatchObject({ id: ean8Typo.id, barcode_check_digit_valid: false });

    // internal codes and Code 128 are kept and matched exactly as given (trimmed)
    const sku = (
      await post(t, '/retail/admin/products', { name: 'Deli by weight', brand_id: brand.id, barcode: '  SKU-000123 ' })
    ).product;
    expect(sku).toMatchObject({ barcode: 'SKU-000123', barcode_check_digit_valid: null });
    const code128 = (
      await post(t, '/retail/admin/products', { name: 'Bakery', brand_id: brand.id, barcode: 'BK/12 x+%' })
    ).product;
    const short = (
      await post(t, '/retail/admin/products', { name: 'Store code', brand_id: brand.id, barcode: '12345' })
    ).product;
    expect((await find('SKU-000123')).body.product).toMatchObject({ id: sku.id, barcode_type: 'OTHER' });
    expect((await find('BK/12 x+%')).body.product.id).toBe(code128.id);
    expect((await find('12345')).body.product.id).toBe(short.id);
    expect((await find('sku-000123')).status).toBe(404);
    const dupCode = await call('POST', '/retail/admin/products', {
      key: t.adminKey,
      json: { name: 'again', brand_id: brand.id, barcode: 'SKU-000123' },
    });
    expect(dupCode.status).toBe(409);

    // unknown codes of any kind: 404 in exactly these words
    for (const code of ['5901234123457', '4006381333932', 'NOPE-1']) {
      const unknown = await find(code);
      expect(unknown.status, code).toBe(404);
      expect(unknown.body).toEqual({ detail: 'Resource not found' });
    }
    // only what no retailer prints is refused, and nothing is stored
    const before = (await call('GET', `/retail/brands/${brand.id}/products`, { key: t.adminKey })).body.products.length;
    for (const barcode of ['café', 'X'.repeat(65), 'tab\there']) {
      const refused = await call('POST', '/retail/admin/products', {
        key: t.adminKey,
        json: { name: 'bad', brand_id: brand.id, barcode },
      });
      expect(refused.status, barcode).toBe(422);
      expect(refused.body.detail).toMatch(/^barcode/);
    }
    expect((await find('café')).status).toBe(422);
    expect((await call('GET', `/retail/brands/${brand.id}/products`, { key: t.adminKey })).body.products).toHaveLength(
      before,
    );
  });

  it('answers every unknown or other organization\'s item with 404 "Resource not found"', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const user = await basicUser(t);
    const brand = (await post(other, '/retail/admin/brands', { name: 'Theirs' })).brand;
    const product = (await post(other, '/retail/admin/products', { name: 'Their product', brand_id: brand.id }))
      .product;
    const venue = (await post(other, '/retail/admin/venues', { name: 'Their shop', latitude: 1, longitude: 1 })).venue;
    const brandBody = { name: 'X' };
    const productBody = { name: 'X', brand_id: brand.id };
    const venueBody = { name: 'X', latitude: 1, longitude: 1 };
    for (const id of [999_999_999, null]) {
      const b = id ?? brand.id;
      const p = id ?? product.id;
      const v = id ?? venue.id;
      for (const [method, path, key, json] of [
        ['GET', `/retail/brands/${b}`, user.key],
        ['GET', `/retail/brands/${b}/products`, user.key],
        ['GET', `/retail/products/${p}`, user.key],
        ['GET', `/retail/venues/${v}/details`, user.key],
        ['PUT', `/retail/admin/brands/${b}`, t.adminKey, brandBody],
        ['DELETE', `/retail/admin/brands/${b}`, t.adminKey],
        [
          'PUT',
          `/retail/admin/products/${p}`,
          t.adminKey,
          { ...productBody, brand_id: (await post(t, '/retail/admin/brands', brandBody)).brand.id },
        ],
        ['DELETE', `/retail/admin/products/${p}`, t.adminKey],
        ['PUT', `/retail/admin/venues/${v}`, t.adminKey, venueBody],
        ['DELETE', `/retail/admin/venues/${v}`, t.adminKey],
        ['POST', `/retail/admin/venues/${v}/products`, t.adminKey, { product_id: p, price: 1 }],
      ] as const) {
        const res = await call(method, path, { key, json });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body, `${method} ${path}`).toEqual({ detail: 'Resource not found' });
      }
    }
    // nothing of theirs changed
    expect((await call('GET', `/retail/products/${product.id}`, { key: other.adminKey })).body.product).toEqual(
      product,
    );
    expect((await call('GET', `/retail/venues/${venue.id}/details`, { key: other.adminKey })).body.venue).toEqual(
      venue,
    );
  });

  it('lists featured brands and products in the admin order; static paths win over ids', async () => {
    const t = await newTenant();
    const b1 = (await post(t, '/retail/admin/brands', { name: 'Second', featured: true, featured_rank: 2 })).brand;
    const b2 = (await post(t, '/retail/admin/brands', { name: 'First', featured: true, featured_rank: 1 })).brand;
    await post(t, '/retail/admin/brands', { name: 'Plain' });
    const featured = await call('GET', '/retail/brands/featured', { key: t.adminKey });
    expect(featured.status).toBe(200);
    expect(featured.body.brands.map((b: any) => b.id)).toEqual([b2.id, b1.id]);
    const p = (await post(t, '/retail/admin/products', { name: 'Star', brand_id: b1.id, featured: true })).product;
    await post(t, '/retail/admin/products', { name: 'Other', brand_id: b1.id });
    expect(
      (await call('GET', '/retail/products/featured', { key: t.adminKey })).body.products.map((x: any) => x.id),
    ).toEqual([p.id]);
    expect(
      (await call('GET', '/retail/brands?featured=false', { key: t.adminKey })).body.brands.map((b: any) => b.name),
    ).toEqual(['Plain']);
  });

  it('answers nearby venues by great-circle distance within the radius, per organization', async () => {
    const t = await newTenant();
    const other = await newTenant();
    // Madrid, Puerta del Sol and points around it
    const sol = { lat: 40.4169, lon: -3.7035 };
    const near = (
      await post(t, '/retail/admin/venues', {
        name: 'Near',
        address: 'Calle Mayor 1',
        latitude: 40.4175,
        longitude: -3.704,
      })
    ).venue;
    const mid = (
      await post(t, '/retail/admin/venues', { name: 'Mid', address: 'Gran Via 30', latitude: 40.42, longitude: -3.706 })
    ).venue;
    const far = (await post(t, '/retail/admin/venues', { name: 'Far', latitude: 40.47, longitude: -3.7035 })).venue; // ~5.9 km north
    await post(other, '/retail/admin/venues', { name: 'Other org', latitude: 40.417, longitude: -3.7036 });
    const res = await call('GET', `/retail/venues/nearby?latitude=${sol.lat}&longitude=${sol.lon}`, {
      key: t.adminKey,
    });
    expect(res.status).toBe(200);
    expect(res.body.radius).toBe(5000);
    expect(res.body.engine).toBe('latitude-bands');
    expect(res.body.venues.map((v: any) => v.id)).toEqual([near.id, mid.id]);
    expect(res.body.venues[0].distance_m).toBeGreaterThan(70);
    expect(res.body.venues[0].distance_m).toBeLessThan(90);
    const wide = await call('GET', `/retail/venues/nearby?latitude=${sol.lat}&longitude=${sol.lon}&radius=7000`, {
      key: t.adminKey,
    });
    expect(wide.body.venues.map((v: any) => v.id)).toEqual([near.id, mid.id, far.id]);
    expect(wide.body.venues[2].distance_m / 1000).toBeCloseTo(5.9, 0);

    // moved and deleted venues are seen at once
    expect(
      (
        await call('PUT', `/retail/admin/venues/${far.id}`, {
          key: t.adminKey,
          json: { name: 'Far, moved', latitude: 40.4168, longitude: -3.7034 },
        })
      ).status,
    ).toBe(200);
    await call('DELETE', `/retail/admin/venues/${near.id}`, { key: t.adminKey });
    const after = await call('GET', `/retail/venues/nearby?latitude=${sol.lat}&longitude=${sol.lon}`, {
      key: t.adminKey,
    });
    expect(after.body.venues.map((v: any) => v.name)).toEqual(['Far, moved', 'Mid']);

    for (const [q, field] of [
      ['latitude=91&longitude=0', 'latitude'],
      ['latitude=abc&longitude=0', 'latitude'],
      ['latitude=&longitude=0', 'latitude'],
      ['latitude=10', 'longitude'],
      ['latitude=10&longitude=0&radius=-5', 'radius'],
      ['latitude=10&longitude=0&radius=999999999', 'radius'],
    ]) {
      const bad = await call('GET', `/retail/venues/nearby?${q}`, { key: t.adminKey });
      expect(bad.status, q).toBe(422);
      expect(bad.body.detail, q).toMatch(new RegExp(`^${field}`));
    }
  });

  it('gives venue details with mapped products and places data from the configured provider (local Google Places stand-in), cached', async () => {
    const t = await newTenant();
    const brand = (await post(t, '/retail/admin/brands', { name: 'Dairy' })).brand;
    const milk = (await post(t, '/retail/admin/products', { name: 'Whole Milk 1L', brand_id: brand.id })).product;
    const venue = (
      await post(t, '/retail/admin/venues', {
        name: 'Corner Shop',
        address: '5 High St',
        latitude: 51.5,
        longitude: -0.12,
      })
    ).venue;
    const mapped = await call('POST', `/retail/admin/venues/${venue.id}/products`, {
      key: t.adminKey,
      json: { product_id: milk.id, price: 1.25, status: 'active' },
    });
    expect(mapped.status).toBe(201);
    expect(mapped.body.mapping).toMatchObject({
      venue_id: venue.id,
      product_id: milk.id,
      price: 1.25,
      status: 'active',
    });
    await call('POST', `/retail/admin/venues/${venue.id}/products`, {
      key: t.adminKey,
      json: { product_id: milk.id, price: 1.35, status: 'out_of_stock' },
    });
    // status is a string: any label up to 40 characters is stored (trimmed) and returned as given
    for (const bad of ['', '   ', 'x'.repeat(41), 'out\nof stock', 7, null]) {
      const badStatus = await call('POST', `/retail/admin/venues/${venue.id}/products`, {
        key: t.adminKey,
        json: { product_id: milk.id, price: 1, status: bad },
      });
      expect(badStatus.status, JSON.stringify(bad)).toBe(422);
      expect(badStatus.body.detail, JSON.stringify(bad)).toMatch(/^status/);
    }
    const cheese = (await post(t, '/retail/admin/products', { name: 'Cheddar 200g', brand_id: brand.id })).product;
    const available = await call('POST', `/retail/admin/venues/${venue.id}/products`, {
      key: t.adminKey,
      json: { product_id: cheese.id, price: 3.5, status: ' available ' },
    });
    expect(available.status, JSON.stringify(available.body)).toBe(201);
    expect(available.body.mapping).toMatchObject({ product_id: cheese.id, status: 'available' });
    const long = 'x'.repeat(40);
    expect(
      (
        await call('POST', `/retail/admin/venues/${venue.id}/products`, {
          key: t.adminKey,
          json: { product_id: cheese.id, price: 3.5, status: long },
        })
      ).body.mapping.status,
    ).toBe(long);
    await call('POST', `/retail/admin/venues/${venue.id}/products`, {
      key: t.adminKey,
      json: { product_id: cheese.id, price: 3.5, status: 'available' },
    });

    const count = async () =>
      ((await (await fetch(`${inject('placesUrl')}/__count`)).json()) as { count: number }).count;
    const before = await count();
    const details = await call('GET', `/retail/venues/${venue.id}/details`, { key: t.adminKey });
    expect(details.status).toBe(200);
    expect(details.body).toMatchObject({
      success: true,
      venue: { id: venue.id, name: 'Corner Shop' },
      products: [
        { product_id: milk.id, name: 'Whole Milk 1L', price: 1.35, status: 'out_of_stock' },
        { product_id: cheese.id, name: 'Cheddar 200g', price: 3.5, status: 'available' },
      ],
      places_source: 'google',
      places: { name: 'Corner Shop', address: '5 High St', rating: 4.4, category: 'grocery_store' },
    });
    await call('GET', `/retail/venues/${venue.id}/details`, { key: t.adminKey });
    expect(await count()).toBe(before + 1); // the second answer came from the cache

    const broken = (await post(t, '/retail/admin/venues', { name: 'Broken Place', latitude: 1, longitude: 1 })).venue;
    const b = await call('GET', `/retail/venues/${broken.id}/details`, { key: t.adminKey });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({
      places: null,
      places_source: 'google',
      places_error: expect.stringContaining('500'),
    });
    // a user's key learns only that the data is unavailable, not why
    const user = await basicUser(t);
    const asUser = await call('GET', `/retail/venues/${broken.id}/details`, { key: user.key });
    expect(asUser.status).toBe(200);
    expect(asUser.body).toMatchObject({
      venue: { id: broken.id },
      places: null,
      places_source: 'google',
      places_error: 'unavailable',
    });
    expect((await call('GET', '/retail/venues/999999999/details', { key: t.adminKey })).status).toBe(404);
  });
});
