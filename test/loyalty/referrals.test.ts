import jsqr from 'jsqr';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
// jsqr's types declare an ES default export its CommonJS build does not have: the module is the function.
const jsQR = ((jsqr as unknown as { default?: unknown }).default ?? jsqr) as unknown as typeof jsqr.default;
import { basicUser, call, edgeUrl, newTenant } from '../helpers/api.ts';
import { useSuiteClients } from '../helpers/runtime.ts';

const suite = useSuiteClients();
const DAY = 86_400_000;

async function decodeQr(base64: string): Promise<string | undefined> {
  const { data, info } = await sharp(Buffer.from(base64, 'base64'))
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return jsQR(new Uint8ClampedArray(data), info.width, info.height)?.data;
}

const points = async (key: string, user: string) => (await call('GET', `/loyalty/points/${user}`, { key })).body.points;
const codeOf = async (u: { key: string; idp_id: string }) =>
  (await call('POST', '/loyalty/generate-referral-qr', { key: u.key, json: { idp_id: u.idp_id } })).body
    .referral_code as string;
const refer = (key: string, referred_internal_id: string, referrer_internal_id: string) =>
  call('POST', '/loyalty/process-referral', { key, json: { referred_internal_id, referrer_internal_id } });

describe('referral QR codes', () => {
  it('gives a stable code per user whose QR PNG decodes to the referral URL', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const res = await call('POST', '/loyalty/generate-referral-qr', {
      key: u.key,
      json: { idp_id: u.idp_id, organization_id: t.organization_id },
    });
    expect(res.status).toBe(200);
    expect(res.body.referral_url).toMatch(/\/referral\/[A-Z0-9]{10}$/);
    expect(Buffer.from(res.body.qr_code, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(await decodeQr(res.body.qr_code)).toBe(res.body.referral_url);
    const again = await call('POST', '/loyalty/generate-referral-qr', { key: u.key, json: { idp_id: u.idp_id } });
    expect(again.body.referral_url).toBe(res.body.referral_url);
    // The URL leads somewhere: the code resolves to its organization without a key.
    const landing = await call('GET', `/referral/${res.body.referral_code}`);
    expect(landing.body).toEqual({
      valid: true,
      referral_code: res.body.referral_code,
      organization_id: t.organization_id,
    });
    expect((await fetch(`${edgeUrl()}/referral/NOSUCHCODE`)).status).toBe(404);
  });

  it('keeps a basic key to its own code and refuses another organization', async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    expect(
      (await call('POST', '/loyalty/generate-referral-qr', { key: a.key, json: { idp_id: b.idp_id } })).status,
    ).toBe(403);
    const other = await newTenant();
    expect(
      (
        await call('POST', '/loyalty/generate-referral-qr', {
          key: other.adminKey,
          json: { idp_id: a.idp_id, organization_id: t.organization_id },
        })
      ).status,
    ).toBe(403);
  });
});

describe('POST /loyalty/process-referral', () => {
  it('credits both sides the configured points once, as a workflow', async () => {
    const t = await newTenant();
    await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { referral_points: 120, referred_points: 40 } });
    const referrer = await basicUser(t);
    const referred = await basicUser(t);
    // the newcomer redeems the referrer's code
    const res = await refer(referred.key, referred.user_id, await codeOf(referrer));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      points_awarded: 120,
      referred_points_awarded: 40,
      duplicate: false,
      referrer_user_id: referrer.user_id,
      referred_user_id: referred.user_id,
    });
    expect(res.body.referral_id).toMatch(/^ref_/);
    expect(await points(referrer.key, referrer.user_id)).toBe(120);
    expect(await points(referred.key, referred.user_id)).toBe(40);
    const history = await call('GET', `/loyalty/points/${referrer.user_id}/history`, { key: referrer.key });
    expect(history.body.entries[0]).toMatchObject({
      reason: 'referral',
      operation_id: `referral:${res.body.referral_id}:referrer`,
    });
  });

  it('credits once when the same referral is sent 5 times concurrently, and answers repeats with the first result', async () => {
    const t = await newTenant();
    const referrer = await basicUser(t);
    const referred = await basicUser(t);
    const send = () =>
      call('POST', '/loyalty/process-referral', {
        key: t.adminKey,
        json: { referred_internal_id: referred.idp_id, referrer_internal_id: referrer.user_id },
      });
    const results = await Promise.all(Array.from({ length: 5 }, send));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.referral_id)).size).toBe(1);
    expect(results.filter((r) => !r.body.duplicate)).toHaveLength(1);
    const later = await send();
    expect(later.body).toMatchObject({
      duplicate: true,
      referral_id: results[0].body.referral_id,
      points_awarded: 100,
    });
    expect(await points(referrer.key, referrer.user_id)).toBe(100);
    expect(await points(referred.key, referred.user_id)).toBe(50);
  });

  it('refuses self-referral, unknown users, a second referrer, and outsiders', async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    const c = await basicUser(t);
    const self = await call('POST', '/loyalty/process-referral', {
      key: t.adminKey,
      json: { referred_internal_id: a.user_id, referrer_internal_id: a.idp_id },
    });
    expect(self.status).toBe(422);
    expect(self.body.detail).toMatch(/^referrer_internal_id: /);
    const ghost = await call('POST', '/loyalty/process-referral', {
      key: t.adminKey,
      json: { referred_internal_id: 'ghost-user', referrer_internal_id: a.user_id },
    });
    expect(ghost.status).toBe(404);
    expect(ghost.body.detail).toBe('User not found: ghost-user');
    const outsider = await call('POST', '/loyalty/process-referral', {
      key: c.key,
      json: { referred_internal_id: b.user_id, referrer_internal_id: a.user_id },
    });
    expect(outsider.status).toBe(403);
    expect(
      (
        await call('POST', '/loyalty/process-referral', {
          key: t.adminKey,
          json: { referred_internal_id: b.user_id, referrer_internal_id: a.user_id },
        })
      ).status,
    ).toBe(200);
    const second = await call('POST', '/loyalty/process-referral', {
      key: t.adminKey,
      json: { referred_internal_id: b.user_id, referrer_internal_id: c.user_id },
    });
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(/already been referred/);
    expect((await call('GET', `/loyalty/points/${c.user_id}`, { key: c.key })).status).toBe(404);
    const other = await newTenant();
    const cross = await call('POST', '/loyalty/process-referral', {
      key: other.adminKey,
      json: { referred_internal_id: c.user_id, referrer_internal_id: a.user_id, organization_id: t.organization_id },
    });
    expect(cross.status).toBe(403);
  });
});

describe('referrals claimed by a basic key', () => {
  it("refuses a basic key as the referrer: the referred user's one referral stays for the real referrer", async () => {
    const t = await newTenant();
    const alice = await basicUser(t);
    const bob = await basicUser(t);
    const carol = await basicUser(t);
    for (const referrer of [alice.user_id, alice.idp_id, await codeOf(alice)]) {
      const res = await refer(alice.key, bob.user_id, referrer);
      expect(res.status, referrer).toBe(403);
      expect(res.body.detail).toBe('A basic API key may only claim a referral as the referred user (its own user)');
    }
    expect((await call('GET', `/loyalty/points/${alice.user_id}`, { key: alice.key })).status).toBe(404);
    const real = await refer(bob.key, bob.idp_id, await codeOf(carol));
    expect(real.status, JSON.stringify(real.body)).toBe(200);
    expect(real.body).toMatchObject({
      referrer_user_id: carol.user_id,
      referred_user_id: bob.user_id,
      duplicate: false,
    });
    expect(await points(carol.key, carol.user_id)).toBe(100);
    expect(await points(bob.key, bob.user_id)).toBe(50);
    // the code is read case-insensitively; another code afterwards is the usual conflict
    expect((await refer(bob.key, bob.user_id, (await codeOf(carol)).toLowerCase())).body.duplicate).toBe(true);
    expect((await refer(bob.key, bob.user_id, await codeOf(alice))).status).toBe(409);
  });

  it('answers a basic key the same whether another user exists or not, and refuses its own code', async () => {
    const t = await newTenant();
    const me = await basicUser(t);
    const other = await basicUser(t);
    await codeOf(other);
    const missing = [other.user_id, other.idp_id, 'usr_0000000000000000000000', 'nobody-at-all', 'ZZZZZZZZZZ'];
    const asReferrer = await Promise.all(missing.map((ref) => refer(me.key, me.user_id, ref)));
    for (const res of asReferrer)
      expect({ status: res.status, body: res.body }).toEqual({
        status: 404,
        body: { detail: 'Referral code not found' },
      });
    const asReferred = await Promise.all(missing.map((ref) => refer(me.key, ref, ref)));
    for (const res of asReferred)
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: { detail: 'A basic API key may only claim a referral as the referred user (its own user)' },
      });
    const self = await refer(me.key, me.user_id, await codeOf(me));
    expect(self.status).toBe(422);
    expect(self.body.detail).toMatch(/^referrer_internal_id: /);
    // another organization's code is not a code here
    const elsewhere = await basicUser(await newTenant());
    expect((await refer(me.key, me.user_id, await codeOf(elsewhere))).body).toEqual({
      detail: 'Referral code not found',
    });
    expect((await call('GET', `/loyalty/points/${me.user_id}`, { key: me.key })).status).toBe(404);
    expect((await call('GET', `/loyalty/points/${other.user_id}`, { key: t.adminKey })).status).toBe(404);
  });

  it('lets an admin name the referrer by user reference or by code', async () => {
    const t = await newTenant();
    const referrer = await basicUser(t);
    const [a, b] = [await basicUser(t), await basicUser(t)];
    expect((await refer(t.adminKey, a.user_id, referrer.idp_id)).body).toMatchObject({
      referrer_user_id: referrer.user_id,
      duplicate: false,
    });
    expect((await refer(t.adminKey, b.idp_id, await codeOf(referrer))).body).toMatchObject({
      referrer_user_id: referrer.user_id,
      duplicate: false,
    });
    expect(await points(referrer.key, referrer.user_id)).toBe(200);
  });
});

describe('mutual and after-the-fact referrals', () => {
  it('refuses a referral back: a user referred by A never refers A (409, nothing credited)', async () => {
    const t = await newTenant();
    const a = await basicUser(t);
    const b = await basicUser(t);
    expect((await refer(b.key, b.user_id, await codeOf(a))).status).toBe(200);
    const back = await refer(a.key, a.user_id, await codeOf(b));
    expect(back.status, JSON.stringify(back.body)).toBe(409);
    expect(back.body.detail).toMatch(/referred by this user/);
    // the same by an admin naming both users
    const admin = await refer(t.adminKey, a.idp_id, b.user_id);
    expect(admin.status).toBe(409);
    expect(await points(a.key, a.user_id)).toBe(100);
    expect(await points(b.key, b.user_id)).toBe(50);
    // A may still be referred by someone else
    const c = await basicUser(t);
    expect((await refer(a.key, a.user_id, await codeOf(c))).body).toMatchObject({
      referrer_user_id: c.user_id,
      duplicate: false,
    });
    expect(await points(a.key, a.user_id)).toBe(150);
  });

  it("of two users claiming each other's code at the same moment, exactly one wins", async () => {
    const t = await newTenant();
    const pairs = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const [a, b] = [await basicUser(t), await basicUser(t)];
        return { a, b, codeA: await codeOf(a), codeB: await codeOf(b) };
      }),
    );
    const results = await Promise.all(
      pairs.map(({ a, b, codeA, codeB }) =>
        Promise.all([refer(b.key, b.user_id, codeA), refer(a.key, a.user_id, codeB)]),
      ),
    );
    for (const [i, [ab, ba]] of results.entries()) {
      expect([ab.status, ba.status].sort(), JSON.stringify([ab.body, ba.body])).toEqual([200, 409]);
      const { a, b } = pairs[i];
      const [pa, pb] = [await points(a.key, a.user_id), await points(b.key, b.user_id)];
      // one referrer (100) and one referred (50), never both sides for both
      expect([pa, pb].sort((x, y) => x - y)).toEqual([50, 100]);
      expect(ab.status === 200 ? [pa, pb] : [pb, pa]).toEqual([100, 50]);
    }
  });

  it("accepts a referral only within referral_window_days of the account's creation", async () => {
    const t = await newTenant();
    expect((await call('GET', '/loyalty/rules', { key: t.adminKey })).body).toMatchObject({ referral_window_days: 30 });
    for (const bad of [0, 1.5, '30', 3651, null]) {
      const res = await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { referral_window_days: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(res.body.detail).toMatch(/^referral_window_days/);
    }
    const set = await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { referral_window_days: 10 } });
    expect(set.body).toMatchObject({ referral_window_days: 10, referral_points: 100 });
    expect(
      (await call('PUT', '/loyalty/rules', { key: t.adminKey, json: { referral_points: 90 } })).body,
    ).toMatchObject({ referral_window_days: 10 });
    const referrer = await basicUser(t);
    const [veteran, recent] = [await basicUser(t), await basicUser(t)];
    const users = suite.db.collection('users');
    await users.updateOne({ user_id: veteran.user_id }, { $set: { created_at: new Date(Date.now() - 11 * DAY) } });
    await users.updateOne({ user_id: recent.user_id }, { $set: { created_at: new Date(Date.now() - 9 * DAY) } });
    const late = await refer(veteran.key, veteran.user_id, await codeOf(referrer));
    expect(late.status, JSON.stringify(late.body)).toBe(409);
    expect(late.body.detail).toMatch(/within 10 days/);
    expect((await refer(t.adminKey, veteran.idp_id, referrer.user_id)).status).toBe(409);
    expect((await call('GET', `/loyalty/points/${veteran.user_id}`, { key: veteran.key })).status).toBe(404);
    expect((await call('GET', `/loyalty/points/${referrer.user_id}`, { key: referrer.key })).status).toBe(404);
    expect((await refer(recent.key, recent.user_id, await codeOf(referrer))).body).toMatchObject({
      points_awarded: 90,
      duplicate: false,
    });
    // a referral made in time stays answered as it was once the window has passed
    await users.updateOne({ user_id: recent.user_id }, { $set: { created_at: new Date(Date.now() - 40 * DAY) } });
    expect((await refer(recent.key, recent.user_id, await codeOf(referrer))).body).toMatchObject({
      duplicate: true,
      points_awarded: 90,
    });
  });
});
