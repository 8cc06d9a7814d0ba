/**
 * Workflow starts that components need but cannot make themselves (they hold no Temporal client):
 * the composition root hands these in (workers/root.ts), loaded on first use so processes that
 * never call them never load the edge's client.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowNotFoundError } from '@temporalio/client';

import type { StartPaymentEvent } from '../../activities/billing/index.ts';
import { config } from '../../activities/core/config.ts';
import type { RunSend } from '../../activities/email/index.ts';
import type { DeliveryRuns } from '../../activities/events/index.ts';
import type { StartAnalysis } from '../../activities/feedback/index.ts';
import type { RedemptionRuns } from '../../activities/gifts/index.ts';
import type { PrivacyOwner, PrivacyRuns } from '../../activities/privacy/index.ts';
import type { ScanRunOpen } from '../../activities/scanning/index.ts';
import { emailWorkflow } from '../../workflows/email.ts';
import { feedbackAnalysisWorkflow } from '../../workflows/feedback.ts';
import { paymentEventWorkflow } from '../../workflows/payments.ts';
import { redemptionWorkflow, reservedUpdate, settleUpdate } from '../../workflows/redemption.ts';
import { platformSearchAttributes } from '../../workflows/search-attributes.ts';
import { userErasureWorkflow } from '../../workflows/user-erasure.ts';
import { userExportWorkflow } from '../../workflows/user-export.ts';
import { wakeSignal, webhookEndpointWorkflow } from '../../workflows/webhook-endpoint.ts';
import { runIdempotent, runLiveOrDone, startIdempotent, taskQueue, temporal } from './client.ts';

/** `feedback-analysis:<id>`: analyses a stored feedback in the background. */
export const startFeedbackAnalysis: StartAnalysis = async ({ feedback_id, organization_id, user_id }) => {
  const client = await temporal();
  await client.workflow.start(feedbackAnalysisWorkflow, {
    taskQueue: taskQueue(),
    workflowId: `feedback-analysis:${feedback_id}`,
    args: [{ feedback_id }],
    typedSearchAttributes: platformSearchAttributes(organization_id, user_id, 'feedback'),
  });
};

/** The redemption workflow `redemption:<id>`, as gifts needs it (activities/gifts/runs.ts). */
export const redemptionRuns: RedemptionRuns = {
  liveOrDone: (redemption_id) => runLiveOrDone(`redemption:${redemption_id}`),

  async start(input, owner) {
    const client = await temporal();
    try {
      await client.workflow.start(redemptionWorkflow, {
        taskQueue: taskQueue(),
        workflowId: `redemption:${input.redemption_id}`,
        // A refused hold fails the run: the same key may try again once the points are there.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        args: [input],
        typedSearchAttributes: platformSearchAttributes(owner.organization_id, owner.user_id, 'gifts'),
      });
      return true;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      return false;
    }
  },

  async untilSettledOrHeld(redemption_id, wait_ms, held) {
    const handle = (await temporal()).workflow.getHandle<typeof redemptionWorkflow>(`redemption:${redemption_id}`);
    const result = handle.result();
    result.catch(() => undefined); // awaited below, or its outcome is read from the record later
    const done = await Promise.race([
      result.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), wait_ms)),
    ]);
    if (done) return;
    // The record is written with the hold: once it exists the answer needs no worker (an Update
    // would wait for one, e.g. while a killed worker is restarted).
    if (await held()) return;
    try {
      await handle.executeUpdate(reservedUpdate);
    } catch (err) {
      // The run ended before the update reached it: its result says how (a refused hold is a 409).
      const { status } = await handle.describe();
      if (status.name === 'RUNNING') throw err;
      await result;
    }
  },

  async settle(redemption_id, s) {
    const client = await temporal();
    return client.workflow.getHandle(`redemption:${redemption_id}`).executeUpdate(settleUpdate, { args: [s] });
  },
};

/** Whether a scan's run `ticket-scan:<id>` is running or completed (activities/scanning/list.ts). */
export const scanRunOpen: ScanRunOpen = (scan_id) => runLiveOrDone(`ticket-scan:${scan_id}`);

/** `webhook-endpoint:<endpoint_id>`, the endpoint's actor, as the events component needs it (activities/events/emit.ts). */
export const eventDeliveries: DeliveryRuns = {
  async wake({ organization_id, endpoint_id }) {
    const client = await temporal();
    // A running actor gets the signal; an ended one (none yet, or its endpoint was deleted) is started.
    await client.workflow.signalWithStart(webhookEndpointWorkflow, {
      taskQueue: taskQueue(),
      workflowId: `webhook-endpoint:${endpoint_id}`,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      args: [{ organization_id, endpoint_id }],
      signal: wakeSignal,
      signalArgs: [],
      typedSearchAttributes: platformSearchAttributes(organization_id, '_system', 'events'),
      memo: { endpoint_id },
    });
  },
};

/** The user's runs: by the search attributes every platform run carries (privacy's own excepted). */
const userRunsQuery = ({ organization_id, user_id }: PrivacyOwner, extra: string) => {
  const q = (v: string) => `'${v.replace(/[\\']/g, '')}'`;
  return `OrganizationId = ${q(organization_id)} AND UserId = ${q(user_id)} AND Component != 'privacy' AND ${extra}`;
};

/** `user-export:<id>` and `user-erasure:<organization>:<user>`, as the privacy component needs them (activities/privacy). */
export const privacyRuns: PrivacyRuns = {
  async startExport(export_id, owner) {
    const client = await temporal();
    await client.workflow.start(userExportWorkflow, {
      taskQueue: taskQueue(),
      workflowId: `user-export:${export_id}`,
      args: [{ export_id, ttl_ms: config().USER_EXPORT_TTL_HOURS * 3_600_000 }],
      typedSearchAttributes: platformSearchAttributes(owner.organization_id, owner.user_id, 'privacy'),
    });
  },

  async startErasure(key, owner) {
    const client = await temporal();
    try {
      await client.workflow.start(userErasureWorkflow, {
        taskQueue: taskQueue(),
        workflowId: `user-erasure:${key}`,
        // Once per user: asking again while it runs, or after it completed, starts nothing; a run
        // that ended otherwise (terminated by an operator, failed) is started again (its steps are idempotent).
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        args: [{ key }],
        typedSearchAttributes: platformSearchAttributes(owner.organization_id, owner.user_id, 'privacy'),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  },

  async stopUserRuns(owner) {
    const client = await temporal();
    let stopped = 0;
    // A redemption settles money with a provider: it is left to finish (its records are tombstoned).
    for await (const run of client.workflow.list({
      query: userRunsQuery(owner, "Component != 'gifts' AND ExecutionStatus = 'Running'"),
    })) {
      try {
        await client.workflow.getHandle(run.workflowId, run.runId).terminate('the user was erased');
        stopped += 1;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }
    return stopped;
  },

  async purgeUserRuns(owner) {
    const client = await temporal();
    let deleted = 0;
    for await (const run of client.workflow.list({ query: userRunsQuery(owner, "ExecutionStatus != 'Running'") })) {
      try {
        await client.workflowService.deleteWorkflowExecution({
          namespace: client.options.namespace,
          workflowExecution: { workflowId: run.workflowId, runId: run.runId },
        });
        deleted += 1;
      } catch (err) {
        if ((err as { code?: number }).code !== 5) throw err; // NOT_FOUND: deleted already
      }
    }
    return deleted;
  },
};

/**
 * `payment:<event id>`: applies a verified payment provider event once (the provider's retries
 * find the run started or done), filed under the buyer our purchase record names, else under
 * "_platform" (no organization id starts with "_").
 */
export const startPaymentEvent: StartPaymentEvent = async (event, owner) => {
  await startIdempotent(
    paymentEventWorkflow,
    `payment:${event.id}`,
    [event],
    platformSearchAttributes(owner?.organization_id ?? '_platform', owner?.user_id ?? '_payment-provider', 'billing'),
  );
};

/** `email:<org>:<hash of the key>`: one send per key, started or attached to, filed under the user. */
export const runEmailSend: RunSend = (workflowId, req) =>
  runIdempotent(emailWorkflow, workflowId, [req], platformSearchAttributes(req.organization_id, req.user_id, 'email'));
