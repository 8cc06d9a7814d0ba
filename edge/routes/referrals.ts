/** Referral codes with QR images, and referrals as the durable workflow referral:<org>:<referred>. */
import { z } from 'zod';
import { conflict, forbidden, invalid, notFound } from '../../activities/errors';
import { findUserRef } from '../../activities/identity/users';
import { lookupReferralCode, referralQr } from '../../activities/loyalty/referrals';
import { actingUser, organizationFor } from '../auth';
import { defineRoute } from '../http';
import { organizationId, requiredId } from '../schemas';
import { runIdempotent } from '../temporal';
import { platformSearchAttributes } from '../../workflows/search-attributes';
import type { ReferralResult } from '../../workflows/referrals';

const tag = 'loyalty';

defineRoute({
  method: 'POST',
  paths: ['/loyalty/generate-referral-qr'],
  tag,
  summary: "The user's referral code, its URL, and a QR code (base64 PNG) of that URL",
  auth: 'key',
  body: z.object({ idp_id: requiredId, organization_id: organizationId }),
  response: z.object({ success: z.literal(true), qr_code: z.string(), referral_url: z.string(), referral_code: z.string(), user_id: z.string(), idp_id: z.string(), organization_id: z.string() }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.idp_id);
    const out = await referralQr(org, user.user_id);
    return { success: true, qr_code: out.qr_code, referral_url: out.referral_url, referral_code: out.code, user_id: user.user_id, idp_id: user.idp_id, organization_id: org };
  },
});

defineRoute({
  method: 'GET',
  paths: ['/referral/:code'],
  tag,
  summary: 'Where a referral URL leads: whether the code is valid and for which organization (no key)',
  auth: 'none',
  rateLimit: 'ip',
  params: z.object({ code: z.string().trim().regex(/^[A-Za-z0-9]{4,32}$/, 'not a referral code') }),
  response: z.object({ valid: z.literal(true), referral_code: z.string(), organization_id: z.string() }),
  handler: async ({ params }) => {
    const doc = await lookupReferralCode(params.code);
    return { valid: true, referral_code: doc.code, organization_id: doc.organization_id };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/loyalty/process-referral'],
  tag,
  summary: 'Credits referrer and referred once (workflow referral:<org>:<referred>); a repeat answers the first result',
  auth: 'key',
  body: z.object({ referred_internal_id: requiredId, referrer_internal_id: requiredId, organization_id: organizationId }),
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
    // Both users must exist in the organization; nobody is created by a referral.
    const existing = async (ref: string) => {
      const user = await findUserRef(org, ref);
      if (!user) throw notFound(`User not found: ${ref}`);
      return user;
    };
    const referred = await existing(body.referred_internal_id);
    const referrer = await existing(body.referrer_internal_id);
    if (principal.level === 0 && principal.user_id !== referred.user_id && principal.user_id !== referrer.user_id) {
      throw forbidden('A basic API key may only process a referral it is part of');
    }
    if (referred.user_id === referrer.user_id) throw invalid('referrer_internal_id', 'a user cannot refer themselves');
    const { result, attached } = await runIdempotent<ReferralResult>(
      'referralWorkflow',
      `referral:${org}:${referred.user_id}`,
      [{ organization_id: org, referrer_user_id: referrer.user_id, referred_user_id: referred.user_id }],
      platformSearchAttributes(org, referred.user_id, 'referrals'),
    );
    if (attached && result.referrer_user_id !== referrer.user_id) {
      throw conflict('This user has already been referred by another user');
    }
    return { ...result, duplicate: result.duplicate || attached };
  },
});
