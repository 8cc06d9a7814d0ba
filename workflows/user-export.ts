import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';

import type * as activities from '../activities/workflow-activities.ts';
import { BACKGROUND } from './retry.ts';

const { beginUserExport, exportUserPart, packUserExport, failUserExport, expireUserExport } = proxyActivities<
  typeof activities
>({
  startToCloseTimeout: '10 minutes',
  retry: BACKGROUND,
});

export interface UserExportInput {
  export_id: string;
  /** how long the zip stays downloadable (USER_EXPORT_TTL_HOURS when asked) */
  ttl_ms: number;
}

/**
 * `user-export:<export_id>` (docs/privacy.md): each component's part of the user's data, then the
 * zip; the zip is removed when it expires. The input holds no personal data: the activities read
 * the user from the export's record.
 */
export async function userExportWorkflow(input: UserExportInput): Promise<void> {
  let parts: string[] = [];
  try {
    parts = await beginUserExport(input.export_id);
    if (!parts.length) return;
    for (const part of parts) await exportUserPart({ export_id: input.export_id, part });
    await packUserExport({ export_id: input.export_id, parts, ttl_ms: input.ttl_ms });
  } catch (err) {
    const message =
      err instanceof ApplicationFailure || err instanceof Error
        ? ((err.cause as Error | undefined)?.message ?? err.message)
        : String(err);
    await failUserExport({ export_id: input.export_id, parts, error: message });
    return;
  }
  await sleep(input.ttl_ms);
  await expireUserExport(input.export_id);
}
