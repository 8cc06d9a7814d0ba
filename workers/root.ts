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
import { billingTask } from '../activities/billing/index.ts';
import { documentsTask } from '../activities/documents/index.ts';
import { emailTask } from '../activities/email/index.ts';
import { configureEvents, registerEventSource } from '../activities/events/index.ts';
import { configureFeedback, feedbackTask } from '../activities/feedback/index.ts';
import { loyaltyTask, onScanCreditReversed, publishPendingEntries } from '../activities/loyalty/index.ts';
import { configureGifts, giftsForSearch } from '../activities/gifts/index.ts';
import { searchableCatalogue } from '../activities/retail/index.ts';
import { configureScanning, markScanReversed } from '../activities/scanning/index.ts';
import { userResponses } from '../activities/responses/index.ts';
import { configureScheduler, registerTask } from '../activities/scheduler/index.ts';
import { configureSearch } from '../activities/search/index.ts';
import { userTextExcerpts } from '../activities/text/index.ts';
import { supportTask } from '../activities/support/index.ts';
import { billingUserData } from '../activities/billing/index.ts';
import { documentsUserData } from '../activities/documents/index.ts';
import { emailUserData } from '../activities/email/index.ts';
import { eventsUserData } from '../activities/events/index.ts';
import { feedbackUserData } from '../activities/feedback/index.ts';
import { giftsUserData } from '../activities/gifts/index.ts';
import { idempotencyUserData } from '../activities/idempotency/index.ts';
import { exportIdentity, finishIdentityErasure } from '../activities/identity/index.ts';
import { imagesUserData } from '../activities/images/index.ts';
import { llmUserData } from '../activities/llm/index.ts';
import { loyaltyUserData } from '../activities/loyalty/index.ts';
import { configurePrivacy, LAST_PART, registerUserData, type PrivacyRuns } from '../activities/privacy/index.ts';
import { responsesUserData } from '../activities/responses/index.ts';
import { retailUserData } from '../activities/retail/index.ts';
import { scanningUserData } from '../activities/scanning/index.ts';
import { schedulerUserData } from '../activities/scheduler/index.ts';
import { searchUserData } from '../activities/search/index.ts';
import { sessionsUserData } from '../activities/sessions/index.ts';
import { supportUserData } from '../activities/support/index.ts';
import { textUserData } from '../activities/text/index.ts';

let wired = false;

const privacyRunsOf = () => import('../edge/starts.ts').then((m) => m.privacyRuns);
const lazyPrivacyRuns = {
  startExport: (...a: Parameters<PrivacyRuns['startExport']>) => privacyRunsOf().then((r) => r.startExport(...a)),
  startErasure: (...a: Parameters<PrivacyRuns['startErasure']>) => privacyRunsOf().then((r) => r.startErasure(...a)),
  stopUserRuns: (...a: Parameters<PrivacyRuns['stopUserRuns']>) => privacyRunsOf().then((r) => r.stopUserRuns(...a)),
  purgeUserRuns: (...a: Parameters<PrivacyRuns['purgeUserRuns']>) => privacyRunsOf().then((r) => r.purgeUserRuns(...a)),
};

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
  // --- scheduler: each event's Temporal Schedule (the edge's client), loaded on first use ---
  configureScheduler({ schedules: () => import('../edge/schedules.ts').then((m) => m.eventSchedules) });
  // --- search: the sources a user's search reads ---
  configureSearch({
    catalogue: searchableCatalogue,
    gifts: giftsForSearch,
    texts: userTextExcerpts,
    documents: (organization_id, user_id) => userResponses(organization_id, user_id, 'document'),
  });
  // --- feedback: its analysis workflow, started by the edge's client, loaded on first use ---
  configureFeedback({ startAnalysis: (feedback) => import('../edge/starts.ts').then((m) => m.startFeedbackAnalysis(feedback)) });
  // --- gifts: the redemption workflow's start, wait and settle update, by the edge's client ---
  configureGifts({
    runs: {
      start: (input, owner) => import('../edge/starts.ts').then((m) => m.redemptionRuns.start(input, owner)),
      untilSettledOrHeld: (id, wait_ms, held) => import('../edge/starts.ts').then((m) => m.redemptionRuns.untilSettledOrHeld(id, wait_ms, held)),
      settle: (id, s) => import('../edge/starts.ts').then((m) => m.redemptionRuns.settle(id, s)),
    },
  });
  // --- scanning: whether a scan's run is still open (the list drops records of runs that are gone) ---
  configureScanning({ runOpen: (scan_id) => import('../edge/starts.ts').then((m) => m.scanRunOpen(scan_id)) });
  // --- events: the delivery workflow's start and manual retry, by the edge's client ---
  configureEvents({
    runs: {
      start: (run) => import('../edge/starts.ts').then((m) => m.eventDeliveries.start(run)),
      retry: (run) => import('../edge/starts.ts').then((m) => m.eventDeliveries.retry(run)),
    },
  });
  // --- events: the changes that keep their event with them (the sweep records what a crash left) ---
  registerEventSource('loyalty', publishPendingEntries);
  // --- privacy: each component's part of a user's data, in the order an erasure runs them:
  // sessions and the scheduler first (nothing new starts for the user), records before the files
  // they name, money last but identity, whose last end deletes the user itself ---
  registerUserData('sessions', sessionsUserData);
  registerUserData('scheduler', schedulerUserData);
  registerUserData('support', supportUserData);
  registerUserData('scanning', scanningUserData);
  registerUserData('documents', documentsUserData);
  registerUserData('text', textUserData);
  registerUserData('responses', responsesUserData);
  registerUserData('images', imagesUserData);
  registerUserData('search', searchUserData);
  registerUserData('feedback', feedbackUserData);
  registerUserData('email', emailUserData);
  registerUserData('llm', llmUserData);
  registerUserData('idempotency', idempotencyUserData);
  registerUserData('retail', retailUserData);
  registerUserData('loyalty', loyaltyUserData);
  registerUserData('gifts', giftsUserData);
  registerUserData('billing', billingUserData);
  registerUserData('events', eventsUserData);
  registerUserData(LAST_PART, { export: exportIdentity, erase: (scope) => finishIdentityErasure(scope, scope.tombstone) });
  // --- privacy: the export and erasure runs, by the edge's client, loaded on first use ---
  configurePrivacy({ runs: lazyPrivacyRuns });
  // --- loyalty: what a reversal tells the component that earned the points ---
  onScanCreditReversed(markScanReversed);
}
