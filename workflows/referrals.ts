import { proxyActivities } from '@temporalio/workflow';

import type * as activities from '../activities/workflow-activities.ts';
import { refusal } from './failures.ts';
import { INTERACTIVE } from './retry.ts';

const { recordReferral, creditReferral, completeReferral } = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: INTERACTIVE,
});

export interface ReferralInput {
  organization_id: string;
  referrer_user_id: string;
  referred_user_id: string;
}

export interface ReferralResult {
  success: true;
  referral_id: string;
  points_awarded: number;
  referred_points_awarded: number;
  referrer_user_id: string;
  referred_user_id: string;
  /** the referred user had been referred before: nothing new was credited */
  duplicate: boolean;
}

/**
 * `referral:<org>:<referred user>`: records the referral once, credits both sides exactly once
 * (ledger operation ids per referral and side), then marks it completed. Recording refuses (409,
 * nothing credited) a referral after the referred account's window or by a user they referred,
 * and claims the pair of users first, so only one of two mutual claims is ever recorded. Every step is
 * idempotent, so a retry or a rerun after Temporal's retention credits nothing twice.
 */
export async function referralWorkflow(input: ReferralInput): Promise<ReferralResult> {
  const { referral, existing } = await recordReferral(input);
  if (existing && referral.referrer_user_id !== input.referrer_user_id) {
    throw refusal('conflict', 'This user has already been referred by another user', 'referred_internal_id');
  }
  // Also on `existing`: completes a referral whose earlier run stopped between its steps.
  await creditReferral({
    organization_id: input.organization_id,
    referral_id: referral.referral_id,
    user_id: referral.referrer_user_id,
    side: 'referrer',
    points: referral.referrer_points,
  });
  await creditReferral({
    organization_id: input.organization_id,
    referral_id: referral.referral_id,
    user_id: referral.referred_user_id,
    side: 'referred',
    points: referral.referred_points,
  });
  await completeReferral(referral.referral_id);
  return {
    success: true,
    referral_id: referral.referral_id,
    points_awarded: referral.referrer_points,
    referred_points_awarded: referral.referred_points,
    referrer_user_id: referral.referrer_user_id,
    referred_user_id: referral.referred_user_id,
    duplicate: existing,
  };
}
