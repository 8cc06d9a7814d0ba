/**
 * The ticket scan's runs, `ticket-scan:<scan id>` (workflows/ticket-scan.ts), as the edge's scan
 * routes use them: started (or attached to) and awaited until the receipt is read, asked where a
 * scan stands, and given an admin's validation.
 */
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import {
  processedUpdate,
  type ScanInput,
  scanQuery,
  type ScanView,
  ticketScanWorkflow,
  type ValidateInput,
  validateUpdate,
} from '../../workflows/ticket-scan.ts';
import { temporal, updateWithStartIdempotent } from './client.ts';

const workflowId = (scan_id: string) => `ticket-scan:${scan_id}`;

/**
 * Starts the scan's run (or attaches to the one there) and waits until it has read the receipt
 * (its `processed` Update), in one round trip. A run that finished before the Update reached it
 * answers with its result.
 */
export function runTicketScan(input: ScanInput): Promise<ScanView> {
  return updateWithStartIdempotent(
    ticketScanWorkflow,
    workflowId(input.scan_id),
    [input],
    platformSearchAttributes(input.organization_id, input.user_id, 'ticket_scan'),
    processedUpdate,
  );
}

/** Where the scan stands, from its run (throws when the run is gone or unreachable). */
export async function ticketScanState(scan_id: string): Promise<ScanView> {
  return (await temporal()).workflow.getHandle(workflowId(scan_id)).query(scanQuery);
}

/** An admin's validation of the scan's products, applied by its run. */
export async function validateTicketScan(scan_id: string, update: ValidateInput): Promise<ScanView> {
  return (await temporal()).workflow.getHandle(workflowId(scan_id)).executeUpdate(validateUpdate, { args: [update] });
}
