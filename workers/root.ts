/**
 * The composition root: the one place that knows every component. Components never import each
 * other's capabilities where a cycle or an upward import would follow; they declare what they need
 * (a scheduler task, a search source, a hook) and this file hands it in. Every process that runs
 * component code calls `wirePlatform()` once before its first request or activity: the edge
 * (workers/edge.ts), the worker (workers/worker.ts), the suite's in-process tests
 * (test/setup/wire.ts) and the bench.
 *
 * docs/architecture.md draws the rooms and the import rules (.dependency-cruiser.cjs checks them).
 */
import { billingTask } from '../activities/billing';
import { documentsTask } from '../activities/documents';
import { emailTask } from '../activities/email';
import { feedbackTask } from '../activities/feedback';
import { loyaltyTask } from '../activities/loyalty';
import { registerTask } from '../activities/scheduler';
import { supportTask } from '../activities/support';

let wired = false;

export function wirePlatform(): void {
  if (wired) return;
  wired = true;
  // --- scheduler: each component's task for its type_of_event ---
  registerTask('email', emailTask);
  registerTask('loyalty', loyaltyTask);
  registerTask('billing', billingTask);
  registerTask('support', supportTask);
  registerTask('feedback', feedbackTask);
  registerTask('documents', documentsTask);
  // --- search: the sources a user's search reads ---
  // --- loyalty: what a reversal tells the component that earned the points ---
}
