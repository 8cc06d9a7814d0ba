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
import { billingTask, billingUserData, configureBilling } from '../activities/billing/index.ts';
import { documentsTask, documentsUserData } from '../activities/documents/index.ts';
import { configureEmail, emailTask, emailUserData } from '../activities/email/index.ts';
import { configureEvents, eventsUserData, registerEventSource } from '../activities/events/index.ts';
import { configureFeedback, feedbackTask, feedbackUserData } from '../activities/feedback/index.ts';
import { configureGifts, giftsForSearch, giftsUserData } from '../activities/gifts/index.ts';
import { idempotencyUserData } from '../activities/idempotency/index.ts';
import { exportIdentity, finishIdentityErasure } from '../activities/identity/index.ts';
import { imagesUserData } from '../activities/images/index.ts';
import { llmUserData } from '../activities/llm/index.ts';
import {
  loyaltyTask,
  loyaltyUserData,
  onScanCreditReversed,
  publishPendingEntries,
} from '../activities/loyalty/index.ts';
import { configurePrivacy, LAST_PART, registerUserData } from '../activities/privacy/index.ts';
import { responsesUserData, userResponses } from '../activities/responses/index.ts';
import { retailUserData, searchableCatalogue } from '../activities/retail/index.ts';
import { configureScanning, markScanReversed, scanningUserData } from '../activities/scanning/index.ts';
import { configureScheduler, registerTask, schedulerUserData } from '../activities/scheduler/index.ts';
import { configureSearch, searchUserData } from '../activities/search/index.ts';
import { sessionsUserData } from '../activities/sessions/index.ts';
import { supportTask, supportUserData } from '../activities/support/index.ts';
import { textUserData, userTextExcerpts } from '../activities/text/index.ts';
import { eventSchedules } from './runs/event-schedules.ts';
import {
  eventDeliveries,
  privacyRuns,
  redemptionRuns,
  runEmailSend,
  scanRunOpen,
  startFeedbackAnalysis,
  startPaymentEvent,
} from './runs/starts.ts';

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
  // --- scheduler: each event's Temporal Schedule (the runs room) ---
  configureScheduler({ schedules: eventSchedules });
  // --- search: the sources a user's search reads ---
  configureSearch({
    catalogue: searchableCatalogue,
    gifts: giftsForSearch,
    texts: userTextExcerpts,
    documents: (organization_id, user_id) => userResponses(organization_id, user_id, 'document'),
  });
  // --- the runs components need but cannot start themselves (they hold no Temporal client) ---
  configureFeedback({ startAnalysis: startFeedbackAnalysis });
  configureBilling({ startPaymentEvent });
  configureEmail({ runSend: runEmailSend });
  configureGifts({ runs: redemptionRuns });
  // whether a scan's run is still open (the list drops records of runs that are gone)
  configureScanning({ runOpen: scanRunOpen });
  configureEvents({ runs: eventDeliveries });
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
  registerUserData(LAST_PART, {
    export: exportIdentity,
    erase: (scope) => finishIdentityErasure(scope, scope.tombstone),
  });
  // --- privacy: the export and erasure runs ---
  configurePrivacy({ runs: privacyRuns });
  // --- loyalty: what a reversal tells the component that earned the points ---
  onScanCreditReversed(markScanReversed);
}
