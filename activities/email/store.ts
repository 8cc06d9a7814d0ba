/**
 * Email's data: the record of each message sent (one per organization and idempotency key) and
 * the per-user hourly limit: per user and hour, a `k:` document per idempotency key counted (an
 * insert under a unique key: a repeat counts once) and a counter document whose `n` goes up by
 * a conditional `$inc` (`n < limit`), exact when senders race in any process.
 */
import { byId, insertOnce } from '../core/db/index.ts';
import {
  EmailLog,
  type EmailLogDoc,
  EmailTemplate,
  type EmailTemplateDoc,
  SendCount,
  Suppression,
  type SuppressionDoc,
} from './models.ts';

const BATCH = 500;

export type { EmailLogDoc, EmailTemplateDoc, SuppressionDoc };

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
const baseOf = (u: HourOfUser) => `${u.organization_id}|${u.user_id}|${u.hour.toISOString()}|`;
const fieldsOf = (u: HourOfUser) => ({ organization_id: u.organization_id, user_id: u.user_id, hour: u.hour });

/** Counts the key in the user's hour once; false when it was counted already. */
export async function countKey(u: HourOfUser, keyHash: string): Promise<boolean> {
  return insertOnce(SendCount, { _id: `${baseOf(u)}k:${keyHash}`, ...fieldsOf(u) });
}

/** Gives the key back (its send did not happen): a retry after the hour is counted then. */
export async function uncountKey(u: HourOfUser, keyHash: string): Promise<void> {
  await SendCount.deleteOne({ _id: `${baseOf(u)}k:${keyHash}` });
}

/**
 * Sends the previous version counted in this hour: its numbered slot documents `<base>1`…
 * `<base><limit>` (read once per user and hour, when the hour's counter is created).
 */
async function slotsOfPreviousVersion(u: HourOfUser, limit: number): Promise<number> {
  const ids = Array.from({ length: Math.min(limit, 1000) }, (_, i) => `${baseOf(u)}${i + 1}`);
  return (await SendCount.find({ _id: { $in: ids } }, { _id: 1 }).lean()).length;
}

/** Counts one send in the user's hour; false when `limit` are counted already. */
export async function takeSend(u: HourOfUser, limit: number): Promise<boolean> {
  const _id = `${baseOf(u)}count`;
  const take = async () =>
    (await SendCount.updateOne({ _id, n: { $lt: limit } }, { $inc: { n: 1 } })).modifiedCount === 1;
  if (await take()) return true;
  // The hour's first send (else the counter is full, or was created by a concurrent send after
  // the first try): the counter, then the user's earlier hours are of no further use.
  if (
    !(await SendCount.exists({ _id })) &&
    (await insertOnce(SendCount, { _id, ...fieldsOf(u), n: await slotsOfPreviousVersion(u, limit) }))
  ) {
    await SendCount.deleteMany({ organization_id: u.organization_id, user_id: u.user_id, hour: { $lt: u.hour } }).catch(
      () => undefined,
    );
  }
  return take();
}

// ---- one person's data (user-data.ts)

/**
 * The messages sent for the user (a user's export and erasure). `email_log` declares no index on
 * the user: this filter reads the collection (rare: once per export or erasure). A user's
 * messages sent through `/email/send` have `_id`s `<organization>|<user_id>:…`, a report's
 * `<organization>|event:<run id>`, so no `_id` range covers them all.
 */
export async function sentRecordsOf(organization_id: string, user_id: string): Promise<EmailLogDoc[]> {
  return EmailLog.find({ organization_id, user_id }).sort({ sent_at: 1 }).lean<EmailLogDoc[]>();
}

/** Deletes sent records by `_id`, 500 at a time (each batch answered from the primary key). */
export async function deleteSentRecords(ids: string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += BATCH)
    deleted += (await EmailLog.deleteMany({ _id: { $in: ids.slice(i, i + BATCH) } })).deletedCount ?? 0;
  return deleted;
}

/** The user's hourly counters (`count` documents with their `n`, and counted keys), on the (organization_id, user_id, hour) index. */
export async function sendCountsOf(
  organization_id: string,
  user_id: string,
): Promise<Array<{ _id: string; hour: Date; n?: number }>> {
  return SendCount.find({ organization_id, user_id })
    .sort({ hour: 1 })
    .lean<Array<{ _id: string; hour: Date; n?: number }>>();
}

/** Deletes the user's hourly counters, on the (organization_id, user_id, hour) index. */
export async function deleteSendCounts(organization_id: string, user_id: string): Promise<number> {
  return (await SendCount.deleteMany({ organization_id, user_id })).deletedCount ?? 0;
}

// ---- templates (templates.ts)

const templateKey = (organization_id: string, template_id: string) => `${organization_id}|${template_id}`;

export const readTemplate = (organization_id: string, template_id: string) =>
  byId<EmailTemplateDoc>(EmailTemplate, templateKey(organization_id, template_id));

/** A new template; false when the organization already has one of this id. */
export const insertTemplate = (doc: Omit<EmailTemplateDoc, '_id'>) =>
  insertOnce(EmailTemplate, { _id: templateKey(doc.organization_id, doc.template_id), ...doc });

/** Replaces a template's content; null when it does not exist (deleted meanwhile). */
export const replaceTemplate = (
  organization_id: string,
  template_id: string,
  set: Pick<EmailTemplateDoc, 'name' | 'default_locale' | 'versions' | 'variables' | 'updated_at' | 'updated_by'>,
) =>
  EmailTemplate.findOneAndUpdate(
    { _id: templateKey(organization_id, template_id) },
    { $set: set },
    { new: true },
  ).lean<EmailTemplateDoc>();

export async function deleteTemplate(organization_id: string, template_id: string): Promise<boolean> {
  return ((await EmailTemplate.deleteOne({ _id: templateKey(organization_id, template_id) })).deletedCount ?? 0) === 1;
}

export const countTemplates = (organization_id: string) => EmailTemplate.countDocuments({ organization_id });

export const listTemplates = (organization_id: string, limit: number) =>
  EmailTemplate.find({ organization_id }).sort({ created_at: -1 }).limit(limit).lean<EmailTemplateDoc[]>();

// ---- suppressions (suppressions.ts): `_id` `<organization>|<address hash>`

const suppressionKey = (organization_id: string, address_hash: string) => `${organization_id}|${address_hash}`;

export const readSuppression = (organization_id: string, address_hash: string) =>
  byId<SuppressionDoc>(Suppression, suppressionKey(organization_id, address_hash));

/** Suppresses once: false when the address was suppressed already (the first reason stays). */
export const insertSuppression = (doc: Omit<SuppressionDoc, '_id'>) =>
  insertOnce(Suppression, { _id: suppressionKey(doc.organization_id, doc.address_hash), ...doc });

export async function deleteSuppression(organization_id: string, address_hash: string): Promise<boolean> {
  return (
    ((await Suppression.deleteOne({ _id: suppressionKey(organization_id, address_hash) })).deletedCount ?? 0) === 1
  );
}

/** The organization's suppressions, newest first, those before `before` (the page's cursor). */
export const listSuppressions = (organization_id: string, limit: number, before?: Date, reason?: string) =>
  Suppression.find({
    organization_id,
    ...(before && { created_at: { $lt: before } }),
    ...(reason && { reason }),
  })
    .sort({ created_at: -1 })
    .limit(limit)
    .lean<SuppressionDoc[]>();

/** Suppressions by address hash (a user's export and erasure), on the primary key. */
export const suppressionsOf = (organization_id: string, hashes: string[]) =>
  Suppression.find({ _id: { $in: hashes.map((h) => suppressionKey(organization_id, h)) } }).lean<SuppressionDoc[]>();

/** Blanks the addresses of these suppressions: the hashes stay, so the person is still not mailed. */
export async function forgetSuppressedAddresses(organization_id: string, hashes: string[]): Promise<number> {
  const res = await Suppression.updateMany(
    { _id: { $in: hashes.map((h) => suppressionKey(organization_id, h)) }, address: { $ne: null } },
    { $set: { address: null } },
  );
  return res.modifiedCount ?? 0;
}
