/** What the workflows over a stored upload (images, documents, audio) share. */
import { workflowInfo } from '@temporalio/workflow';

import type { StoredUpload } from '../activities/images/index.ts';
import { isClientFailure } from './failures.ts';

/** Runs the stage, dropping the stored upload when the client's file is refused. */
export async function orDiscard<T>(
  discard: (path: string) => Promise<void>,
  upload: StoredUpload,
  stage: () => Promise<T>,
): Promise<T> {
  try {
    return await stage();
  } catch (err) {
    if (isClientFailure(err)) await discard(upload.original_path);
    throw err;
  }
}

/** The metadata every normalized response of an uploaded file carries. */
export function uploadContext(
  upload: StoredUpload,
  input: { idp_id: string; session_id: string; conversation_id: string },
) {
  return {
    media_id: upload.media_id,
    workflow_id: workflowInfo().workflowId,
    user_id: upload.user_id,
    idp_id: input.idp_id,
    organization_id: upload.organization_id,
    session_id: input.session_id,
    conversation_id: input.conversation_id,
    source_filename: upload.filename,
  };
}
