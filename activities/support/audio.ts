/** Activities of the audio-qa workflow: transcribe the stored upload, then answer its text. */
import { transcribe, type Transcript } from '../adapters/speech.ts';
import { getObject } from '../adapters/storage.ts';
import { PlatformError } from '../core/errors.ts';
import type { StoredUpload } from '../images/index.ts';
import { speechRoute } from '../llm/index.ts';

export async function transcribeStoredAudio(upload: StoredUpload): Promise<Transcript> {
  const body = await getObject(upload.original_path);
  if (!body) throw new PlatformError('not_found', `Upload not found in storage: ${upload.original_path}`);
  return transcribe(body, await speechRoute({ organization_id: upload.organization_id, user_id: upload.user_id }));
}
