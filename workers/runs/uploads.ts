/**
 * The runs that work on a file a route received (edge/idempotency.ts `runOnUpload` stores it once,
 * then runs one of these): each names its workflow id and starts (or attaches to) its run, filed
 * under the uploader.
 */
import type { Workflow, WorkflowResultType } from '@temporalio/common';

import type { StoredUpload } from '../../activities/images/index.ts';
import { audioQaWorkflow } from '../../workflows/audio-qa.ts';
import { generateThumbnailWorkflow, processDocumentWorkflow } from '../../workflows/documents.ts';
import { convertHeicWorkflow, processImageWorkflow } from '../../workflows/images.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import type { ScanInput, ScanView } from '../../workflows/ticket-scan.ts';
import { runIdempotent } from './client.ts';
import { runTicketScan } from './ticket-scans.ts';

/** A run over an upload: its workflow id for a media id, and the run given the rest of its input. */
export interface UploadWorkflow<Rest, R> {
  workflowId(media_id: string): string;
  run(workflowId: string, upload: StoredUpload, rest: Rest): Promise<R>;
}

type Rest<W extends Workflow> = Omit<Parameters<W>[0], 'upload'>;

function awaited<W extends Workflow & ((input: never) => Promise<unknown>)>(
  workflow: W,
  prefix: string,
  component: string,
): UploadWorkflow<Rest<W>, WorkflowResultType<W>> {
  return {
    workflowId: (media_id) => `${prefix}:${media_id}`,
    run: async (workflowId, upload, rest) => {
      const args = [{ ...rest, upload }] as Parameters<W>;
      const attributes = platformSearchAttributes(upload.organization_id, upload.user_id, component);
      return (await runIdempotent(workflow, workflowId, args, attributes)).result;
    },
  };
}

export const documentRun = awaited(processDocumentWorkflow, 'document', 'documents');
export const thumbnailRun = awaited(generateThumbnailWorkflow, 'thumbnail', 'documents');
export const imageRun = awaited(processImageWorkflow, 'image', 'images');
export const heicRun = awaited(convertHeicWorkflow, 'heic', 'images');
export const audioQaRun = awaited(audioQaWorkflow, 'audio-qa', 'support');

/** The scan's run answers once it has read the receipt (update-with-start, workers/runs/ticket-scans.ts). */
export const ticketScanRun: UploadWorkflow<Omit<ScanInput, 'upload' | 'scan_id'>, ScanView> = {
  workflowId: (scan_id) => `ticket-scan:${scan_id}`,
  run: (_workflowId, upload, rest) => runTicketScan({ ...rest, scan_id: upload.media_id, upload }),
};
