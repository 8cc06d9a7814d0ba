/**
 * Addresses an organization never mails (docs/components/email.md, "Suppressions"): unsubscribed
 * by the link every message carries, permanently rejected by the mail server (a hard bounce), or
 * added by an admin. An address is normalised (trimmed, lower-case: over-suppressing a mailbox
 * whose server tells case apart is the safe side) and kept under a keyed hash of it
 * (core/encryption.ts): the hash is what sends look up, and what survives a person's erasure.
 *
 * The unsubscribe link carries the organization, the address and a signature over both (an HMAC
 * under a key derived from the configuration key): nobody can make a link for an address they do
 * not already hold one for, and a wrong signature answers exactly like any other wrong link.
 */
import { timingSafeEqual } from 'node:crypto';

import { keyedHash } from '../core/encryption.ts';
import { notFound } from '../core/errors.ts';
import type { SuppressionDoc } from './models.ts';
import { emailSettings } from './settings.ts';
import {
  deleteSuppression,
  forgetSuppressedAddresses,
  insertSuppression,
  listSuppressions as readSuppressions,
  readSuppression,
  suppressionsOf,
} from './store.ts';

export const SUPPRESSION_REASONS = ['unsubscribe', 'hard_bounce', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export const normalAddress = (address: string) => address.trim().toLowerCase();
const hashOf = (organization_id: string, address: string) =>
  keyedHash('email-suppression', `${organization_id}\u0000${normalAddress(address)}`);

/** The unsubscribe link's signature: 128 bits of an HMAC over the organization and the address. */
const signature = (organization_id: string, address: string) =>
  keyedHash('email-unsubscribe', `${organization_id}\u0000${normalAddress(address)}`).slice(0, 32);

/** The keyless link that unsubscribes `address` from the organization's mail (GET page, POST one-click). */
export function unsubscribeUrl(organization_id: string, address: string): string {
  const q = new URLSearchParams({
    o: organization_id,
    a: normalAddress(address),
    t: signature(organization_id, address),
  });
  return `${emailSettings().publicUrl}/email/unsubscribe?${q}`;
}

/** Whether the link's signature is the one of its organization and address (constant time). */
export function validLink(organization_id: string, address: string, token: string): boolean {
  const want = Buffer.from(signature(organization_id, address));
  const got = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
}

export async function isSuppressed(organization_id: string, address: string): Promise<SuppressionDoc | null> {
  return readSuppression(organization_id, hashOf(organization_id, address));
}

export interface SuppressionView {
  address: string | null;
  reason: SuppressionReason;
  source: string;
  detail: string | null;
  created_at: string;
}

const view = (d: SuppressionDoc): SuppressionView => ({
  address: d.address,
  reason: d.reason,
  source: d.source,
  detail: d.detail,
  created_at: new Date(d.created_at).toISOString(),
});

/**
 * Suppresses the address (once: a second suppression keeps the first's reason and answers it
 * with `created: false`).
 */
export async function suppress(
  organization_id: string,
  address: string,
  reason: SuppressionReason,
  source: string,
  detail: string | null = null,
): Promise<{ created: boolean; suppression: SuppressionView }> {
  const doc = {
    organization_id,
    address_hash: hashOf(organization_id, address),
    address: normalAddress(address),
    reason,
    source,
    detail: detail?.slice(0, 300) ?? null,
    created_at: new Date(),
  };
  if (await insertSuppression(doc)) return { created: true, suppression: view({ _id: '', ...doc }) };
  const first = await readSuppression(organization_id, doc.address_hash);
  return { created: false, suppression: view(first ?? { _id: '', ...doc }) };
}

/** Lifts a suppression (an admin's decision): 404 when the address is not suppressed. */
export async function unsuppress(organization_id: string, address: string): Promise<void> {
  if (!(await deleteSuppression(organization_id, hashOf(organization_id, address))))
    throw notFound('Address not suppressed in this organization');
}

export async function listSuppressions(
  organization_id: string,
  opts: { limit: number; before?: Date; reason?: SuppressionReason },
): Promise<SuppressionView[]> {
  return (await readSuppressions(organization_id, opts.limit, opts.before, opts.reason)).map(view);
}

// ---- one person's data (user-data.ts)

export const suppressionsOfAddresses = async (organization_id: string, addresses: string[]) =>
  (
    await suppressionsOf(
      organization_id,
      addresses.map((a) => hashOf(organization_id, a)),
    )
  ).map(view);

/** The erasure: the addresses go, their hashes stay (the person is still not mailed). */
export const forgetAddresses = (organization_id: string, addresses: string[]) =>
  forgetSuppressedAddresses(
    organization_id,
    addresses.map((a) => hashOf(organization_id, a)),
  );
