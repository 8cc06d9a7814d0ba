import { describe, expect, it } from 'vitest';

import { basicUser, call, fileForm, newTenant, unique } from '../helpers/api.ts';
import { renderReceipt } from '../helpers/receipts.ts';
import { balance, groceries, shop } from '../helpers/shop.ts';

describe('receipt and ticket scanning', () => {
  it('reads a generated receipt: venue, each product with quantity and points, credited once; the same receipt again is a duplicate', async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    const image = await renderReceipt(groceries('2026-11-20'));
    const res = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({}, { data: image, name: 'receipt.png', type: 'image/png' }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const scan = res.body;
    expect(scan).toMatchObject({
      status: 'completed',
      user_id: user.user_id,
      venue_id: String(s.venue.id),
      validation_required: false,
      validation_status: 'not_required',
      points_processed: true,
    });
    expect(scan.venue_match.venue_id).toBe(String(s.venue.id));
    expect(scan.venue_match.confidence).toBeGreaterThan(0.8);
    expect(scan.venue_match.explanation).toContain('Fresh Mart');
    const byName = Object.fromEntries(scan.products.map((p: any) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(Object.keys(s.products).sort());
    expect(byName['Coca-Cola 330ml']).toMatchObject({
      id: String(s.products['Coca-Cola 330ml'].id),
      quantity: 2,
      points: 20,
      validation_status: 'auto_approved',
      needs_validation: false,
    });
    for (const p of scan.products) expect(p.confidence).toBeGreaterThanOrEqual(0.8);
    expect(scan.total_points).toBe(50);
    expect(scan.receipt).toMatchObject({ total: 9.73, items_total: 9.73, date: '2026-11-20' });
    expect(scan.ocr.engine).toBe('tesseract.js');
    expect(scan.points_processed_at).toEqual(expect.any(String));
    expect(await balance(s.t, user.user_id)).toBe(50);

    const thumb = await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}/thumbnail`, { key: user.key });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    expect(scan.thumbnail_url).toMatch(new RegExp(`/api/ticket-scan/loyalty/ticket-scan/${scan.id}/thumbnail$`));

    const again = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({}, { data: image, name: 'receipt.png', type: 'image/png' }),
    });
    expect(again.body).toMatchObject({
      status: 'rejected',
      duplicate_of: scan.id,
      total_points: 0,
      points_processed: false,
    });
    // the same purchase photographed again (another image, same merchant, date and total)
    const jpeg = await renderReceipt(groceries('2026-11-20'), 'jpeg');
    const photo = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({}, { data: jpeg, name: 'again.jpg', type: 'image/jpeg' }),
    });
    expect(photo.body).toMatchObject({ status: 'rejected', duplicate_of: scan.id });
    expect(await balance(s.t, user.user_id)).toBe(50);
    expect(scan).toMatchObject({ points_capped: false, max_points_per_scan: 500 });
    // a receipt earns once per organization: another user passing it on gets nothing
    const other = await basicUser(s.t);
    for (const [data, name, type] of [
      [image, 'receipt.png', 'image/png'],
      [jpeg, 'again.jpg', 'image/jpeg'],
    ] as const) {
      const theirs = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
        key: other.key,
        form: fileForm({}, { data, name, type }),
      });
      expect(theirs.body, name).toMatchObject({
        status: 'rejected',
        duplicate_of: scan.id,
        total_points: 0,
        points_processed: false,
        user_id: other.user_id,
      });
    }
    expect(await balance(s.t, other.user_id)).toBe(0);

    // status: the owner and admins of the organization; nobody else
    expect(
      (await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}`, { key: user.key })).body,
    ).toMatchObject({ id: scan.id, status: 'completed', confidence_score: expect.any(Number) });
    expect((await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}`, { key: other.key })).status).toBe(404);
    expect(
      (await call('GET', `/api/ticket-scan/loyalty/ticket-scan/${scan.id}`, { key: (await newTenant()).adminKey }))
        .status,
    ).toBe(404);
    expect(
      (await call('GET', '/api/ticket-scan/loyalty/ticket-scan/scan_unknown', { key: s.t.adminKey })).body,
    ).toEqual({ detail: 'Scan not found' });
  });

  it("credits at most the rules' max_points_per_scan and says so", async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    expect((await call('PUT', '/loyalty/rules', { key: s.t.adminKey, json: { max_points_per_scan: 30 } })).status).toBe(
      200,
    );
    const image = await renderReceipt(groceries('2026-11-19'));
    const res = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({}, { data: image, name: 'receipt.png', type: 'image/png' }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.products.reduce((a: number, p: any) => a + p.points, 0)).toBe(50);
    expect(res.body).toMatchObject({
      status: 'completed',
      total_points: 30,
      points_capped: true,
      max_points_per_scan: 30,
      points_processed: true,
    });
    expect(await balance(s.t, user.user_id)).toBe(30);
  });

  it('holds products under the threshold for validation; an admin approves or rejects them and the points are credited once', async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    // bread at 5.99 where the venue sells it at 3.49: its price disagrees
    const spec = groceries('2026-11-21');
    spec.items[3] = { name: 'Sourdough Bread', price: 5.99 };
    spec.items[1] = { name: 'Organic Bananas 1kg', qty: 3, price: 5.97 };
    const image = await renderReceipt(spec);
    const res = await call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
      key: user.key,
      json: { user_id: user.idp_id, venue_id: String(s.venue.id), brand_id: null, image: image.toString('base64') },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const scan = res.body;
    expect(scan).toMatchObject({
      status: 'pending_validation',
      validation_required: true,
      validation_status: 'pending',
      points_processed: false,
    });
    const bread = scan.products.find((p: any) => p.name === 'Sourdough Bread');
    expect(bread).toMatchObject({ needs_validation: true, validation_status: 'pending' });
    expect(bread.confidence).toBeLessThan(0.8);
    expect(scan.products.filter((p: any) => p.validation_status === 'auto_approved')).toHaveLength(3);
    expect(await balance(s.t, user.user_id)).toBe(0);

    const path = `/api/ticket-scan/loyalty/ticket-scan/${scan.id}`;
    expect(
      (
        await call('POST', `${path}/validate`, {
          key: user.key,
          json: { validations: [{ product_id: bread.id, is_valid: true }] },
        })
      ).status,
    ).toBe(403);
    const unknown = await call('POST', `${path}/validate`, {
      key: s.t.adminKey,
      json: { validations: [{ product_id: '999999', is_valid: true }] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('999999');
    const notPending = await call('POST', `${path}/validate`, {
      key: s.t.adminKey,
      json: { validations: [{ product_id: String(s.products['Whole Milk 1L'].id), is_valid: true }] },
    });
    expect(notPending.status).toBe(400);
    expect(notPending.body.detail).toMatch(/not pending/);
    expect((await call('GET', path, { key: user.key })).body.status).toBe('pending_validation');

    const ok = await call('POST', `${path}/validate`, {
      key: s.t.adminKey,
      json: { validations: [{ product_id: bread.id, is_valid: true, notes: 'price rise confirmed' }] },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({
      status: 'completed',
      validation_status: 'completed',
      points_processed: true,
      total_points: 20 + 30 + 10 + 10,
    });
    expect(ok.body.products.find((p: any) => p.id === bread.id)).toMatchObject({
      validation_status: 'approved',
      validated_by: s.t.admin.user_id,
      validated_at: expect.any(String),
      notes: 'price rise confirmed',
    });
    expect(await balance(s.t, user.user_id)).toBe(70);
    const late = await call('POST', `${path}/validate`, {
      key: s.t.adminKey,
      json: { validations: [{ product_id: bread.id, is_valid: false }] },
    });
    expect(late.status).toBe(400);
    expect(late.body.detail).toMatch(/is completed/);
    expect(await balance(s.t, user.user_id)).toBe(70);
    expect((await call('GET', path, { key: user.key })).body).toMatchObject({
      status: 'completed',
      points_processed: true,
      total_points: 70,
    });
  });

  it('flags a receipt whose items exceed its total and credits only what the admin approves', async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    const spec = { ...groceries('2026-11-19'), total: 5.0 };
    const res = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({}, { data: await renderReceipt(spec), name: 'r.png', type: 'image/png' }),
    });
    expect(res.body).toMatchObject({
      status: 'pending_validation',
      flags: expect.arrayContaining(['items_exceed_total']),
    });
    expect(res.body.products.every((p: any) => p.validation_status === 'pending')).toBe(true);
    const validations = res.body.products.map((p: any) => ({ product_id: p.id, is_valid: p.name === 'Whole Milk 1L' }));
    const done = await call('POST', `/api/ticket-scan/loyalty/ticket-scan/${res.body.id}/validate`, {
      key: s.t.adminKey,
      json: { validations },
    });
    expect(done.body).toMatchObject({ status: 'completed', total_points: 10 });
    expect(await balance(s.t, user.user_id)).toBe(10);
  });

  it('refuses bad images and bad input with 4xx and records nothing', async () => {
    const s = await shop();
    const user = await basicUser(s.t);
    const scan = (image: string, extra: object = {}) =>
      call('POST', '/api/ticket-scan/loyalty/ticket-scan', {
        key: user.key,
        json: { user_id: user.user_id, venue_id: String(s.venue.id), image, ...extra },
      });
    const png = await renderReceipt(groceries('2026-11-18'));
    const cases: Array<[string, Promise<any>, number, RegExp]> = [
      ['empty', scan(''), 422, /^image: is empty/],
      ['corrupt base64', scan('not*base64!'), 422, /^image: is not valid base64/],
      ['not an image', scan(Buffer.from('hello, I am text').toString('base64')), 400, /Unsupported file type/],
      ['truncated png', scan(png.subarray(0, 400).toString('base64')), 422, /./],
      ['huge', scan(Buffer.alloc(6 * 1024 * 1024, 1).toString('base64')), 413, /./],
      ['unknown venue', scan(png.toString('base64'), { venue_id: '99999999' }), 422, /^venue_id/],
      ['bad venue id', scan(png.toString('base64'), { venue_id: 'abc' }), 422, /^venue_id/],
    ];
    for (const [name, pending, status, detail] of cases) {
      const res = await pending;
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(status);
      if (res.body?.detail) expect(res.body.detail, name).toMatch(detail);
    }
    const noVenue = await call('POST', '/retail/receipts', {
      key: user.key,
      form: fileForm({}, { data: png, name: 'r.png', type: 'image/png' }),
    });
    expect(noVenue.status).toBe(422);
    expect(noVenue.body.detail).toMatch(/^venue_id/);
    const noFile = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({ user_id: user.user_id }),
    });
    expect(noFile.status).toBe(422);
    expect(await balance(s.t, user.user_id)).toBe(0);
    // a receipt from another shop matches no product: rejected, nothing credited
    const alien = await renderReceipt({
      merchant: 'Hardware Depot',
      address: '9 Elm Road',
      date: '2026-11-18',
      items: [
        { name: 'Claw Hammer 16oz', price: 12.5 },
        { name: 'Wood Screws x100', price: 4.2 },
      ],
    });
    const r = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
      key: user.key,
      form: fileForm({}, { data: alien, name: unique('r') + '.png', type: 'image/png' }),
    });
    expect(r.body).toMatchObject({
      status: 'rejected',
      total_points: 0,
      flags: expect.arrayContaining(['no_products_recognized', 'venue_unconfirmed']),
    });
  });

  it("lists a user's scans newest first with filters and pages; every answer carries the scan id; a basic key lists only its own", async () => {
    const s = await shop();
    const [user, other] = [await basicUser(s.t), await basicUser(s.t)];
    const L = '/api/ticket-scan/loyalty/ticket-scan';
    const receipt = async (u: typeof user, spec: Parameters<typeof renderReceipt>[0]) => {
      const res = await call('POST', `/retail/receipts?venue_id=${s.venue.id}`, {
        key: u.key,
        form: fileForm({}, { data: await renderReceipt(spec), name: 'r.png', type: 'image/png' }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.id).toMatch(/^scan_/);
      return res.body;
    };
    const completed = await receipt(user, groceries('2026-09-01'));
    const rejected = await receipt(user, {
      merchant: 'Hardware Depot',
      address: '9 Elm Road',
      date: '2026-09-02',
      items: [{ name: 'Claw Hammer 16oz', price: 12.5 }],
    });
    const between = new Date().toISOString();
    const pendingSpec = { ...groceries('2026-09-03'), total: 5.0 };
    const ticket = await call('POST', L, {
      key: user.key,
      json: {
        user_id: user.user_id,
        venue_id: String(s.venue.id),
        image: (await renderReceipt(pendingSpec)).toString('base64'),
      },
    });
    const pending = ticket.body;
    expect(pending).toMatchObject({ id: expect.stringMatching(/^scan_/), status: 'pending_validation' });
    await receipt(other, groceries('2026-09-04'));
    // a scan that fails is not listed
    const failed = await call('POST', L, {
      key: user.key,
      json: { user_id: user.user_id, image: Buffer.from('not an image at all').toString('base64') },
    });
    expect(failed.status).toBe(400);

    const mine = await call('GET', L, { key: user.key });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body).toMatchObject({ success: true, page: 1, limit: 20, total: 3, has_more: false });
    expect(mine.body.scans.map((x: any) => x.id)).toEqual([pending.id, rejected.id, completed.id]);
    expect(mine.body.scans.map((x: any) => x.status)).toEqual(['pending_validation', 'rejected', 'completed']);
    for (const x of mine.body.scans) expect(x).toMatchObject({ user_id: user.user_id, products: expect.any(Array) });
    expect((await call('GET', `${L}?status=completed`, { key: user.key })).body.scans.map((x: any) => x.id)).toEqual([
      completed.id,
    ]);
    expect((await call('GET', `${L}?source=ticket_scan`, { key: user.key })).body.scans.map((x: any) => x.id)).toEqual([
      pending.id,
    ]);
    const p1 = await call('GET', `${L}?limit=2`, { key: user.key });
    expect(p1.body).toMatchObject({ total: 3, has_more: true, page: 1, limit: 2 });
    expect(p1.body.scans.map((x: any) => x.id)).toEqual([pending.id, rejected.id]);
    const p2 = await call('GET', `${L}?limit=2&page=2`, { key: user.key });
    expect(p2.body).toMatchObject({ total: 3, has_more: false });
    expect(p2.body.scans.map((x: any) => x.id)).toEqual([completed.id]);
    expect(
      (await call('GET', `${L}?from=${encodeURIComponent(between)}`, { key: user.key })).body.scans.map(
        (x: any) => x.id,
      ),
    ).toEqual([pending.id]);
    expect(
      (await call('GET', `${L}?to=${encodeURIComponent(between)}`, { key: user.key })).body.scans.map((x: any) => x.id),
    ).toEqual([rejected.id, completed.id]);

    // admins: any user of the organization by user_id or idp_id, or the whole organization
    expect(
      (await call('GET', `${L}?user_id=${user.idp_id}`, { key: s.t.adminKey })).body.scans.map((x: any) => x.id),
    ).toEqual([pending.id, rejected.id, completed.id]);
    expect((await call('GET', L, { key: s.t.adminKey })).body.total).toBe(4);
    expect((await call('GET', `${L}?user_id=usr_nobody`, { key: s.t.adminKey })).status).toBe(404);
    // a basic key: its own user only, 403 for anyone else (existing or not); another organization: 403
    for (const ref of [other.user_id, other.idp_id, 'someone-else'])
      expect((await call('GET', `${L}?user_id=${ref}`, { key: user.key })).status, ref).toBe(403);
    expect((await call('GET', `${L}?user_id=${user.idp_id}`, { key: user.key })).body.total).toBe(3);
    expect(
      (await call('GET', `${L}?organization_id=${s.t.organization_id}`, { key: (await newTenant()).adminKey })).status,
    ).toBe(403);
    // bad filters: 422 naming the field
    for (const [q, field] of [
      ['from=yesterday', 'from'],
      ['status=lost', 'status'],
      ['limit=0', 'limit'],
      [`from=${between}&to=${between}`, 'to'],
    ]) {
      const res = await call('GET', `${L}?${q}`, { key: user.key });
      expect(res.status, q).toBe(422);
      expect(res.body.detail, q).toMatch(new RegExp(`^${field}`));
    }

    // the validate answer carries the id too
    const validations = pending.products.map((p: any) => ({ product_id: p.id, is_valid: true }));
    const done = await call('POST', `${L}/${pending.id}/validate`, { key: s.t.adminKey, json: { validations } });
    expect(done.body).toMatchObject({ id: pending.id, status: 'completed' });
    expect((await call('GET', `${L}?status=completed`, { key: user.key })).body.scans.map((x: any) => x.id)).toEqual([
      pending.id,
      completed.id,
    ]);
  });
});
