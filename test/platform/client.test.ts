/**
 * The typed client (client/) against the running platform: its generated types match the live
 * OpenAPI document, and a tour through identity, loyalty and gifts goes through it with every call
 * checked by `tsc` (`npx tsc --noEmit -p .`): paths, parameters, bodies, `data` and `error`.
 */
import { readFile } from 'node:fs/promises';

import { describe, expect, expectTypeOf, it } from 'vitest';

import { SCHEMA_FILE, schemaSource } from '../../client/scripts/generate.ts';
import {
  createPlatformClient,
  type ErrorDetail,
  type ErrorSuccess,
  type PlatformClient,
  type RequestBody,
  type ResponseBody,
  type Schemas,
} from '../../client/src/index.ts';
import { adminKey, edgeUrl, unique } from '../helpers/api.ts';

const clientFor = (apiKey: string): PlatformClient =>
  createPlatformClient({ baseUrl: edgeUrl(), apiKey, headers: { 'X-Request-Id': unique('client-test') } });

/** Identity through the client: an organization, its admin key, a user and the user's basic key. */
async function newOrganization() {
  const system = clientFor(adminKey());
  const org = await system.POST('/api/organizations', { body: { name: unique('Org'), tier: 'business' } });
  expect(org.response.status).toBe(201);
  expect(org.error).toBeUndefined();
  const organization_id = org.data!.organization.organization_id;
  expectTypeOf(org.data!.organization).toEqualTypeOf<Schemas['Organization']>();

  const adminIdp = unique('boss');
  const adminKeyRes = await system.POST('/generate_api_key', {
    body: { user_id: adminIdp, organization_id, permissions: ['admin'] },
  });
  expect(adminKeyRes.data).toMatchObject({
    success: true,
    metadata: { organization_id, idp_id: adminIdp, permissions: ['admin'] },
  });
  const admin = clientFor(adminKeyRes.data!.api_key);

  const idp = unique('ana');
  const user = await admin.POST('/api/users', { body: { idp_id: idp, email: `${idp}@example.com` } });
  expect(user.data).toMatchObject({
    success: true,
    created: true,
    user: { idp_id: idp, organization_id, email: `${idp}@example.com` },
  });
  const user_id = user.data!.user.user_id;
  const anaKey = await admin.POST('/generate_api_key', { body: { user_id: idp } });
  expect(anaKey.data?.metadata).toMatchObject({ user_id, permissions: ['basic'] });
  const ana = clientFor(anaKey.data!.api_key);
  return { organization_id, admin, ana, idp, user_id };
}

describe('typed client', () => {
  it('its generated types match the live OpenAPI document (else: npm run client:generate)', async () => {
    const live = await fetch(`${edgeUrl()}/openapi.json`);
    expect(live.status).toBe(200);
    const generated = await schemaSource((await live.json()) as object);
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    let hint = '';
    if (generated !== committed) {
      const want = generated.split('\n');
      const have = committed.split('\n');
      const at = want.findIndex((line, i) => line !== have[i]);
      hint = ` (first difference at line ${at + 1}: committed ${JSON.stringify(have[at])}, live ${JSON.stringify(want[at])})`;
    }
    expect(generated, `client/src/schema.ts is stale: run \`npm run client:generate\` and commit it${hint}`).toBe(
      committed,
    );
  });

  it('tours identity, loyalty and gifts with typed calls and answers', async () => {
    const { organization_id, admin, ana, idp, user_id } = await newOrganization();

    // Loyalty: the admin awards a purchase, Ana reads her balance by her platform id.
    const award = await admin.POST('/loyalty/award-points/{idp_id}', {
      params: { path: { idp_id: idp } },
      body: { action_type: 'purchase' },
    });
    expect(award.error).toBeUndefined();
    const awarded = award.data!;
    expectTypeOf(awarded.points_awarded).toEqualTypeOf<number>();
    expect(awarded).toMatchObject({ success: true, duplicate: false, user_id, idp_id: idp, organization_id });
    expect(awarded.points_awarded).toBeGreaterThan(0);
    // A documented header parameter is typed too: the same Idempotency-Key awards once.
    const once = () =>
      admin.POST('/loyalty/award-points/{idp_id}', {
        params: { path: { idp_id: idp }, header: { 'Idempotency-Key': 'tour-1' } },
        body: { action_type: 'daily_login' },
      });
    const first = await once();
    const again = await once();
    expect(again.data).toMatchObject({ duplicate: true, entry_id: first.data!.entry_id, balance: first.data!.balance });
    const balance = await ana.GET('/loyalty/points/{internal_user_id}', {
      params: { path: { internal_user_id: user_id }, query: { organization_id } },
    });
    expect(balance.data).toMatchObject({ points: first.data!.balance, user_id, idp_id: idp, organization_id });

    // Gifts: the admin creates a gift and reads it back.
    const topUp = {
      gift_name: 'Telcel 100 MXN',
      gift_type: 'mobile_top-ups',
      country: 'mx',
      telco_supplier: 'Telcel',
      recharge_amount: 100,
      points_value: 500,
    } as const;
    expectTypeOf(topUp).toExtend<RequestBody<'postGifts'>>();
    expectTypeOf<ResponseBody<'getGiftsByGiftId'>>().toEqualTypeOf<Schemas['GetGiftsByGiftIdResponse']>();
    const created = await admin.POST('/api/gifts/gifts', { body: topUp });
    expect(created.response.status).toBe(201);
    const gift: Schemas['Gift'] = created.data!.gift;
    expect(gift).toMatchObject({ ...topUp, country: 'MX', organization_id });
    const read = await admin.GET('/api/gifts/gifts/{gift_id}', { params: { path: { gift_id: gift.id } } });
    expect(read.data?.gift).toEqual(gift);
  });

  it("types errors by the route's error schema, and refuses at compile time what the platform refuses", async () => {
    const { admin, ana, idp, user_id } = await newOrganization();
    // Errors: typed by the route's error schema, `ErrorDetail` {detail} or `ErrorSuccess` {success, error}.
    const nobody = await admin.GET('/loyalty/points/{internal_user_id}', {
      params: { path: { internal_user_id: unique('nobody') } },
    });
    expect(nobody.response.status).toBe(404);
    expect(nobody.data).toBeUndefined();
    expectTypeOf(nobody.error!).toEqualTypeOf<ErrorDetail>();
    expect(nobody.error?.detail).toBe('User points not found');

    const escalate = await ana.POST('/generate_api_key', { body: { user_id: idp, permissions: ['admin'] } });
    expect(escalate.response.status).toBe(403);
    expect(escalate.error?.detail).toEqual(expect.any(String));

    const missing = await admin.GET('/api/gifts/gifts/{gift_id}', {
      params: { path: { gift_id: 'gift-that-is-not-there' } },
    });
    expect(missing.response.status).toBe(404);
    expectTypeOf(missing.error!).toEqualTypeOf<ErrorSuccess>();
    expect(missing.error).toEqual({ success: false, error: expect.stringContaining('Gift not found') });

    // The types refuse what the platform would refuse (and the platform refuses it too).
    const wrongBody = await admin.POST('/loyalty/award-points/{idp_id}', {
      params: { path: { idp_id: idp } },
      // @ts-expect-error action_type is a string
      body: { action_type: 42 },
    });
    expect(wrongBody.response.status).toBe(422);
    expect(wrongBody.error?.detail).toMatch(/^action_type/);
    // @ts-expect-error no such path in the document
    const wrongPath = await admin.GET('/loyalty/balance/{user_id}', { params: { path: { user_id } } });
    expect(wrongPath.response.status).toBe(404);
    // @ts-expect-error the path parameter is required
    const noParam = await admin.GET('/api/gifts/gifts/{gift_id}', {});
    expect(noParam.data).toBeUndefined();
  });
});
