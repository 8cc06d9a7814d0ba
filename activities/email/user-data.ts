/**
 * email's part of a user's export and erasure (docs/privacy.md): the record of each message sent
 * for the user (recipient address, subject, type, transport, time), the user's hourly send
 * counters, and the outbox files of the user's messages (the file transport, without SMTP_URL:
 * each a whole message, body included). Addresses and subjects are personal and no total of the
 * organization's is built from them, so everything is deleted; nothing is kept tombstoned. The
 * records do not hold bodies (an SMTP server has them; the outbox file, until erased or expired).
 *
 * Suppressions of the user's addresses (their address on record and those their mail went to) are
 * exported; the erasure blanks their address and keeps the keyed hash, so a person who
 * unsubscribed, or whose mailbox bounced, is still never mailed after their erasure.
 */
import type { UserData } from '../core/user-data.ts';
import { getUser } from '../identity/index.ts';
import { removeOutboxFilesOf } from './outbox.ts';
import { deleteSendCounts, deleteSentRecords, sendCountsOf, sentRecordsOf } from './store.ts';
import { forgetAddresses, normalAddress, suppressionsOfAddresses } from './suppressions.ts';

/** The user's addresses: on record (while the profile is there) and those the user's mail went to. */
async function addressesOf(organization_id: string, user_id: string, sent: { recipient: string }[]) {
  const own = await getUser(organization_id, user_id).then(
    (u) => u.email,
    () => null,
  );
  return [...new Set([...(own ? [own] : []), ...sent.map((m) => m.recipient)].map(normalAddress))];
}

export const emailUserData: UserData = {
  async export({ organization_id, user_id }) {
    const [sent, counts] = await Promise.all([
      sentRecordsOf(organization_id, user_id),
      sendCountsOf(organization_id, user_id),
    ]);
    const suppressions = await suppressionsOfAddresses(
      organization_id,
      await addressesOf(organization_id, user_id, sent),
    );
    return {
      data: {
        suppressions,
        emails_sent: sent.map((m) => ({
          message_id: m.message_id,
          recipient: m.recipient,
          email_type: m.email_type,
          subject: m.subject,
          transport: m.transport,
          outbox_file: m.outbox_file ?? null,
          sent_at: new Date(m.sent_at).toISOString(),
        })),
        // the hourly limit's counters: sends counted per hour (the counted keys are hashes: left out)
        hourly_send_counts: counts
          .filter((c) => c._id.endsWith('|count'))
          .map((c) => ({ hour: new Date(c.hour).toISOString(), sends: c.n ?? 0 })),
      },
      files: [],
    };
  },
  async erase({ organization_id, user_id }) {
    const sent = await sentRecordsOf(organization_id, user_id);
    const suppressed_addresses_forgotten = await forgetAddresses(
      organization_id,
      await addressesOf(organization_id, user_id, sent),
    );
    // The files first, found by the names on the records: once the records are gone nothing names them.
    const outbox_files_deleted = await removeOutboxFilesOf(sent);
    const emails_deleted = await deleteSentRecords(sent.map((m) => m._id));
    return {
      emails_deleted,
      outbox_files_deleted,
      send_counters_deleted: await deleteSendCounts(organization_id, user_id),
      suppressed_addresses_forgotten,
    };
  },
};
