import { proxyLocalActivities } from '@temporalio/workflow';

import type { StoredTextInput } from '../activities/text/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { ONCE } from './retry.ts';

// A local activity, as for documents: the caller waits over HTTP. One attempt: the analysis is
// deterministic and bounded by its own time budget, and a model embedding is metered, so a retry
// would repeat the same failure or charge twice; the client may send the text again.
const { processStoredText } = proxyLocalActivities<typeof activities>({
  startToCloseTimeout: '2 minutes',
  retry: ONCE,
});

/** `text:<text id>`: analyse and embed the stored text in the worker; record the normalized response. */
export async function processTextWorkflow(input: StoredTextInput) {
  return processStoredText(input);
}
