/**
 * Email's data: the record of each message sent (one per organization and idempotency key) and
 * the slots of the per-user hourly limit. The only file that reads or writes email's models.
 *
 * The limit is counted with inserts under unique keys, never a counter: a `k:` document per
 * idempotency key counted, then one of the hour's numbered slots 1..limit (activities/db
 * `takeSlot`). Concurrent senders in any process never take more slots than the limit, where an
 * `$inc` could lose increments on the embedded server (activities/db/README.md).
 */
import { byId, Cache, insertOnce, takeSlot } from '../db';
import { EmailLog, SendSlot, type EmailLogDoc } from './models';

export type { EmailLogDoc };

const sentId = (organization_id: string, idempotency_key: string) => `${organization_id}|${idempotency_key}`;

export async function sentRecord(organization_id: string, idempotency_key: string): Promise<EmailLogDoc | null> {
  return byId<EmailLogDoc>(EmailLog, sentId(organization_id, idempotency_key));
}

/** Records a sent message once per key. */
export async function recordSent(idempotency_key: string, doc: Omit<EmailLogDoc, '_id'>): Promise<void> {
  await insertOnce(EmailLog, { _id: sentId(doc.organization_id, idempotency_key), ...doc });
}

export interface HourOfUser {
  organization_id: string;
  user_id: string;
  hour: Date;
}
const prefixOf = (u: Pick<HourOfUser, 'organization_id' | 'user_id'>) => `${u.organization_id}|${u.user_id}|`;
const baseOf = (u: HourOfUser) => `${prefixOf(u)}${u.hour.toISOString()}|`;
const fieldsOf = (u: HourOfUser) => ({ organization_id: u.organization_id, user_id: u.user_id, hour: u.hour });

/**
 * Where the last free slot was found, per user and hour, so probing starts there: a hint only
 * (a slot taken meanwhile by another process is skipped by its unique key), kept for the hour.
 */
const slotHint = new Cache<string, number>({ max: 10_000, ttlMs: 3_600_000 });

/** Counts the key in the user's hour once; false when it was counted already. */
export async function countKey(u: HourOfUser, keyHash: string): Promise<boolean> {
  return insertOnce(SendSlot, { _id: `${baseOf(u)}k:${keyHash}`, ...fieldsOf(u) });
}

/** Gives the key back (its send did not happen): a retry after the hour is counted then. */
export async function uncountKey(u: HourOfUser, keyHash: string): Promise<void> {
  await SendSlot.deleteOne({ _id: `${baseOf(u)}k:${keyHash}` });
}

/** Takes one of the hour's slots 1..limit; false when all are taken. */
export async function takeSendSlot(u: HourOfUser, limit: number): Promise<boolean> {
  const base = baseOf(u);
  const slot = await takeSlot(SendSlot, { id: (n) => `${base}${n}`, from: slotHint.get(base) ?? 1, to: limit + 1, fields: () => fieldsOf(u) });
  if (!slot) return false;
  slotHint.set(base, slot.n + 1);
  // The hour's first send: the user's earlier hours are of no further use.
  if (slot.n === 1) await SendSlot.deleteMany({ _id: { $gte: prefixOf(u), $lt: base } }).catch(() => undefined);
  return true;
}
