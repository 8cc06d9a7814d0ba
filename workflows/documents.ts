import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';

import type { ProcessedDocument } from '../activities/documents/index.ts';
import type { StoredUpload } from '../activities/images/index.ts';
import type * as activities from '../activities/workflow-activities.ts';
import { asksToResend } from './failures.ts';
import { INTERACTIVE } from './retry.ts';
import { orDiscard, uploadContext } from './uploads.ts';

// Local activities, as for images: the caller waits over HTTP. Few attempts: reading a document
// may take minutes, and one that fails the same way twice will not read a third time. A refused
// file (4xx, e.g. a PDF over the reader's limits) is not retried (workers/activity-wrapper.ts); a
// full PDF reader (503) is, twice within ~1.5 s, then the client gets the 503 and its Retry-After.
const { processStoredDocument, thumbnailStoredFile, discardUpload, storeNormalizedResponse } = proxyLocalActivities<
  typeof activities
>({
  startToCloseTimeout: '3 minutes',
  retry: { ...INTERACTIVE, maximumAttempts: 3 },
});

/**
 * orDiscard, and nothing kept either when the client is told to send the file again: its retry
 * stores it anew (the same object with its Idempotency-Key), so the refused copy would only pile up.
 */
async function readOrDiscard<T>(upload: StoredUpload, stage: () => Promise<T>): Promise<T> {
  try {
    return await orDiscard(discardUpload, upload, stage);
  } catch (err) {
    if (asksToResend(err)) await discardUpload(upload.original_path);
    throw err;
  }
}

export interface ProcessDocumentInput {
  upload: StoredUpload;
  idp_id: string;
  session_id: string;
  conversation_id: string;
}

/** `document:<media_id>`: read, classify and thumbnail the stored document; record the normalized response. */
export async function processDocumentWorkflow(input: ProcessDocumentInput) {
  const { upload } = input;
  const doc: ProcessedDocument = await readOrDiscard(upload, () => processStoredDocument(upload));
  const m = doc.metadata;
  const f = doc.folder_structure;
  const normalized_response =
    `Document ${upload.filename}: ${m.format.toUpperCase()}, ${m.pages} page${m.pages === 1 ? '' : 's'}, ${m.size}` +
    `${m.title ? `, titled "${m.title}"` : ''}${m.author ? ` by ${m.author}` : ''}. ` +
    `Filed under ${f.folder_name} / ${f.subcategory} (${f.category}, confidence ${doc.classification.confidence.toFixed(2)}). ` +
    `${m.word_count} words of text${m.text_source === 'ocr' ? ' read by OCR' : ''}. Thumbnail stored at ${doc.thumbnail_path}.`;
  const metadata = {
    ...uploadContext(upload, input),
    original_path: doc.original_path,
    classification: doc.classification,
    text_excerpt: doc.text_excerpt,
  };
  const stored = await storeNormalizedResponse({
    response_id: workflowInfo().workflowId,
    conversation_id: input.conversation_id,
    user_id: upload.user_id,
    organization_id: upload.organization_id,
    source: 'document',
    message: normalized_response,
    metadata: { ...metadata, data: { folder_structure: f, metadata: m }, thumbnail_path: doc.thumbnail_path },
  });
  return {
    success: true as const,
    data: { folder_structure: f, metadata: m },
    normalized_response,
    metadata: { ...metadata, processed_at: stored.created_at },
    thumbnail_path: doc.thumbnail_path,
  };
}

/** `thumbnail:<media_id>`: the first page or frame of a PDF, image or text document as JPEG. */
export async function generateThumbnailWorkflow(input: { upload: StoredUpload }) {
  return readOrDiscard(input.upload, () => thumbnailStoredFile(input.upload));
}
