import { proxyActivities, workflowInfo } from '@temporalio/workflow';

import type { StoredUpload } from '../activities/images/index.ts';
import type { SupportAnswer } from '../activities/support/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { INTERACTIVE } from './retry.ts';
import { orDiscard } from './uploads.ts';

const { requireConversation, answerQuestion, discardUpload } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  retry: INTERACTIVE,
});
const { transcribeStoredAudio } = proxyActivities<typeof activities>({
  startToCloseTimeout: '5 minutes',
  retry: INTERACTIVE,
});

export interface AudioQaInput {
  upload: StoredUpload;
  organization_id: string;
  user_id: string;
  conversation_id: string;
  session_id?: string;
}

export interface AudioQaResult {
  success: true;
  text: string;
  file_path: string;
  duration: number;
  qa_response: SupportAnswer;
  metadata: { engine: string; format: string; transcription_ms: number; workflow_id: string };
}

/**
 * `audio-qa:<media id>`: verifies the conversation, transcribes the stored audio, answers the
 * text as a support question (stored as a turn of the conversation). Audio the client got wrong
 * (not audio, silent, too long) fails the run with a 4xx and the upload is deleted.
 */
export async function audioQaWorkflow(input: AudioQaInput): Promise<AudioQaResult> {
  const transcript = await orDiscard(discardUpload, input.upload, async () => {
    await requireConversation(input.organization_id, input.user_id, input.conversation_id);
    return transcribeStoredAudio(input.upload);
  });
  const qa_response = await answerQuestion({
    organization_id: input.organization_id,
    user_id: input.user_id,
    conversation_id: input.conversation_id,
    session_id: input.session_id,
    prompt: transcript.text,
    turn_id: `turn_audio_${input.upload.media_id}`,
  });
  return {
    success: true,
    text: transcript.text,
    file_path: input.upload.original_path,
    duration: transcript.duration,
    qa_response,
    metadata: {
      engine: transcript.engine,
      format: transcript.format,
      transcription_ms: transcript.ms,
      workflow_id: workflowInfo().workflowId,
    },
  };
}
