/** Referral codes with QR images, and referrals as the durable workflow referral:<org>:<referred>. */
import { z } from 'zod';

import { conflict, forbidden, invalid, notFound } from '../../activities/core/errors.ts';
import type { Principal } from '../../activities/identity/index.ts';
import { findUserRef } from '../../activities/identity/index.ts';
import { lookupReferralCode, referralCodeOwner, referralQr } from '../../activities/loyalty/index.ts';
import { runIdempotent } from '../../workers/runs/client.ts';
import { referralWorkflow } from '../../workflows/referrals.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { answerField, defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'loyalty';

defineRoute({
  method: 'POST',
  paths: ['/loyalty/generate-referral-qr'],
  tag,
  summary: "The user's referral code, its URL, and a QR code (base64 PNG) of that URL",
  auth: 'key',
  audit: false,
  body: z.object({ idp_id: requiredId, organization_id: organizationId }),
  response: z.object({
    success: z.literal(true),
    qr_code: z.string(),
    referral_url: z.string(),
    referral_code: z.string(),
    user_id: z.string(),
    idp_id: z.string(),
    organization_id: z.string(),
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.idp_id);
    const out = await referralQr(org, user.user_id);
    return {
      success: true,
      qr_code: out.qr_code,
      referral_url: out.referral_url,
      referral_code: out.code,
      user_id: user.user_id,
      idp_id: user.idp_id,
      organization_id: org,
    };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/referral/:code'],
  tag,
  summary: 'Where a referral URL leads: whether the code is valid and for which organization (no key)',
  auth: 'none',
  rateLimit: 'ip',
  params: z.object({
    code: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9]{4,32}$/, 'not a referral code'),
  }),
  response: z.object({ valid: z.literal(true), referral_code: z.string(), organization_id: z.string() }),
  handler: async ({ params }) => {
    const doc = await lookupReferralCode(params.code);
    return { valid: true, referral_code: doc.code, organization_id: doc.organization_id };
  },
});

interface ReferralBody {
  referred_internal_id: string;
  referrer_internal_id: string;
}

/**
 * An end user's key redeems a code for its own user: it cannot credit itself as the referrer of
 * someone else (which would also take that person's one referral), and it learns nothing about
 * other users: a user id that is not its own is 403 and a referrer that is not a code of the
 * organization is 404, whether or not such a user exists.
 */
async function basicParties(
  p: Principal,
  org: string,
  body: ReferralBody,
): Promise<{ referred: string; referrer: string }> {
  const ref = body.referred_internal_id;
  if (org !== p.organization_id || (ref !== p.user_id && ref !== p.idp_id)) {
    throw forbidden('A basic API key may only claim a referral as the referred user (its own user)');
  }
  const referrer = await referralCodeOwner(org, body.referrer_internal_id);
  if (!referrer) throw notFound('Referral code not found');
  return { referred: p.user_id, referrer };
}

/** Admins name both sides; the referrer by user reference or by referral code. Nobody is created by a referral. */
async function adminParties(org: string, body: ReferralBody): Promise<{ referred: string; referrer: string }> {
  const referred = await findUserRef(org, body.referred_internal_id);
  if (!referred) throw notFound(`User not found: ${body.referred_internal_id}`);
  const referrer =
    (await findUserRef(org, body.referrer_internal_id))?.user_id ??
    (await referralCodeOwner(org, body.referrer_internal_id));
  if (!referrer) throw notFound(`User not found: ${body.referrer_internal_id}`);
  return { referred: referred.user_id, referrer };
}

defineRoute({
  method: 'POST',
  paths: ['/loyalty/process-referral'],
  statuses: {
    409: 'Outside the referral window, a mutual referral, or the user was already referred',
    503: 'Busy for these users; retry after Retry-After',
  },
  tag,
  summary:
    "Credits referrer and referred once (workflow referral:<org>:<referred>); a repeat answers the first result. A basic key claims only as the referred user and names the referrer by referral code. 409 when the user was referred by someone else, when the referrer is a user they referred, or when their account is older than the rules' referral_window_days",
  auth: 'key',
  audit: {
    action: 'referral.process',
    target: ({ result }) => ({ type: 'referral', id: answerField(result, 'referral_id') }),
  },
  body: z.object({
    referred_internal_id: requiredId.describe("the newcomer; a basic key's own user"),
    referrer_internal_id: requiredId.describe(
      "the referrer's referral code; an admin may also give a user id or idp_id",
    ),
    organization_id: organizationId,
  }),
  response: z.object({
    success: z.literal(true),
    referral_id: z.string(),
    points_awarded: z.number(),
    referred_points_awarded: z.number(),
    referrer_user_id: z.string(),
    referred_user_id: z.string(),
    duplicate: z.boolean(),
  }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const { referred, referrer } =
      principal.level === 0 ? await basicParties(principal, org, body) : await adminParties(org, body);
    if (referred === referrer) throw invalid('referrer_internal_id', 'a user cannot refer themselves');
    const { result, attached } = await runIdempotent(
      referralWorkflow,
      `referral:${org}:${referred}`,
      [{ organization_id: org, referrer_user_id: referrer, referred_user_id: referred }],
      platformSearchAttributes(org, referred, 'referrals'),
    );
    if (attached && result.referrer_user_id !== referrer) {
      throw conflict('This user has already been referred by another user');
    }
    return { ...result, duplicate: result.duplicate || attached };
  },
});
