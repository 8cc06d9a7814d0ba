/** The documents component's scheduled task: the owner's processed documents per folder, optionally emailed. */
import type { TaskDefinition } from '../core/scheduled-task.ts';
import { mailOnce, periodDays } from '../email/index.ts';
import { userResponses } from '../responses/index.ts';

export const documentsTask: TaskDefinition = {
  mails_report: true,
  /** over metadata.period_days (default 7), emailed to metadata.recipient when given */
  async run(task) {
    const days = periodDays(task.metadata);
    const docs = await userResponses(
      task.organization_id,
      task.user_id,
      'document',
      new Date(Date.now() - days * 86_400_000),
    );
    const folders: Record<string, number> = {};
    for (const d of docs) {
      const folder =
        (d.metadata as { data?: { folder_structure?: { folder_name?: string } } }).data?.folder_structure
          ?.folder_name ?? 'Other';
      folders[folder] = (folders[folder] ?? 0) + 1;
    }
    const recipient = task.metadata.recipient;
    if (typeof recipient !== 'string') return { period_days: days, documents: docs.length, folders };
    const body = `${docs.length} document(s) processed in the last ${days} day(s).\n\n${
      Object.entries(folders)
        .map(([f, n]) => `${f}: ${n}`)
        .join('\n') || 'No documents.'
    }`;
    const sent = await mailOnce(task, {
      recipient,
      metadata: { subject: `Your documents: last ${days} day(s)`, body },
    });
    return { period_days: days, documents: docs.length, folders, ...sent };
  },
};
