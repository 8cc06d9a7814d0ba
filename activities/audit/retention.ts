/**
 * The trail's maintenance, run hourly with the platform's retention (workflows/retention.ts):
 * appends the intents a crash left (outcome unknown), then removes each organization's records
 * older than AUDIT_RETENTION_DAYS. The anchor (the first kept seq and the hash it links to) is
 * written on the head before the records go, so verify always starts from a record that exists
 * or from the tail; a crash in between leaves old records one run longer, never a gap.
 */
import { settleStaleIntents } from './intents.ts';
import { auditSettings } from './settings.ts';
import { allHeads, deleteRecords, newestBefore, seqOfId, setAnchor } from './store.ts';

export interface AuditRetentionResult {
  removed: number;
  organizations: number;
  unknown_recorded: number;
  cutoff: string;
}

export async function purgeAuditRecords(input: { now?: string } = {}): Promise<AuditRetentionResult> {
  const now = input.now ? new Date(input.now) : new Date();
  const unknown_recorded = await settleStaleIntents(now);
  const cutoff = new Date(now.getTime() - auditSettings().AUDIT_RETENTION_DAYS * 86_400_000);
  let removed = 0;
  let organizations = 0;
  for (const head of await allHeads()) {
    const newest = await newestBefore(head._id, cutoff);
    if (!newest) continue;
    const upto = seqOfId(newest._id);
    const from = head.retained_from_seq ?? 1;
    if (upto < from) continue;
    // Records up to `upto` go; the next one (or the next append) links to `upto`'s hash.
    await setAnchor(head._id, upto + 1, newest.hash);
    removed += await deleteRecords(head._id, from, upto);
    organizations += 1;
  }
  return { removed, organizations, unknown_recorded, cutoff: cutoff.toISOString() };
}
