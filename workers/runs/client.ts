/**
 * The runs room's Temporal client, connected once per process: how the edge and the composition
 * root start, query, update and signal runs (docs/architecture.md). Components never import it.
 */
import {
  Client,
  Connection,
  WithStartWorkflowOperation,
  type WorkflowClientInterceptor,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type WorkflowStartOptions,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import {
  type SearchAttributePair,
  TypedSearchAttributes,
  type UpdateDefinition,
  type Workflow,
  type WorkflowResultType,
} from '@temporalio/common';

import { config } from '../../activities/core/config.ts';
import { REQUEST_ID } from '../../workflows/search-attributes.ts';

/**
 * What a process that serves requests wants to know of the runs it starts (the edge: its metrics
 * and its access log), handed in at its start (edge/app.ts). Without one, runs are started plainly.
 */
export interface RunObserver {
  /** the request being served now, if any: its id tags the run, and the run's id joins its list */
  request(): { request_id: string; workflow_ids: string[] } | undefined;
  started(workflowType: string, outcome: 'started' | 'already_started' | 'error'): void;
  failed(workflowType: string, err: WorkflowFailedError): void;
}

let observer: RunObserver | undefined;

export function observeRuns(o: RunObserver): void {
  observer = o;
}

// The type of the runs this process started, so a failure seen when awaiting one is counted by
// type. Runs nobody awaits (started and left) are forgotten oldest first.
const startedTypes = new Map<string, string>();
const remember = (workflowId: string, type: string) => {
  startedTypes.delete(workflowId);
  startedTypes.set(workflowId, type);
  if (startedTypes.size > 10_000) startedTypes.delete(startedTypes.keys().next().value!);
};

type StartOptions = Parameters<NonNullable<WorkflowClientInterceptor['startWithDetails']>>[0]['options'];

/** A run started while serving a request carries its id: memo `request_id` and search attribute `RequestId`. */
function tagged<T extends StartOptions>(options: T): T {
  const ctx = observer?.request();
  if (!ctx) return options;
  const pair: SearchAttributePair = { key: REQUEST_ID, value: ctx.request_id };
  const attrs = options.typedSearchAttributes;
  return {
    ...options,
    memo: { ...options.memo, request_id: ctx.request_id },
    typedSearchAttributes: attrs instanceof TypedSearchAttributes ? attrs.updateCopy([pair]) : [...(attrs ?? []), pair],
  };
}

async function counted<R>(workflowType: string, workflowId: string, start: () => Promise<R>): Promise<R> {
  remember(workflowId, workflowType);
  try {
    const out = await start();
    observer?.started(workflowType, 'started');
    observer?.request()?.workflow_ids.push(workflowId);
    return out;
  } catch (err) {
    const already = err instanceof WorkflowExecutionAlreadyStartedError;
    observer?.started(workflowType, already ? 'already_started' : 'error');
    if (already) observer?.request()?.workflow_ids.push(workflowId);
    throw err;
  }
}

/** Every start through this client, whichever caller makes it, goes through here. */
const requestInterceptor: WorkflowClientInterceptor = {
  startWithDetails: (input, next) =>
    counted(input.workflowType, input.options.workflowId, () => next({ ...input, options: tagged(input.options) })),
  signalWithStart: (input, next) =>
    counted(input.workflowType, input.options.workflowId, () => next({ ...input, options: tagged(input.options) })),
  startUpdateWithStart: (input, next) =>
    counted(input.workflowType, input.workflowStartOptions.workflowId, () =>
      next({ ...input, workflowStartOptions: tagged(input.workflowStartOptions) }),
    ),
};

let client: Promise<Client> | undefined;

export function temporal(): Promise<Client> {
  client ??= (async () => {
    const cfg = config();
    const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS!, connectTimeout: 5000 });
    const c = new Client({
      connection,
      namespace: cfg.TEMPORAL_NAMESPACE,
      interceptors: { workflow: [requestInterceptor] },
    });
    // Awaiting a result has no interceptor: every await (execute, handle.result) ends here.
    const result = c.workflow.result.bind(c.workflow);
    c.workflow.result = (async (workflowId: string, ...rest: unknown[]) => {
      try {
        return await (result as (...a: unknown[]) => Promise<unknown>)(workflowId, ...rest);
      } catch (err) {
        if (err instanceof WorkflowFailedError) observer?.failed(startedTypes.get(workflowId) ?? 'unknown', err);
        throw err;
      }
    }) as typeof c.workflow.result;
    return c;
  })().catch((err) => {
    client = undefined; // next request tries again
    throw err;
  });
  return client;
}

export async function temporalHealthy(): Promise<boolean> {
  const c = await temporal();
  await c.connection.workflowService.getSystemInfo({});
  return true;
}

export async function closeTemporal(): Promise<void> {
  if (!client) return;
  const c = await client.catch(() => undefined);
  client = undefined;
  await c?.connection.close();
}

export const taskQueue = () => config().TEMPORAL_TASK_QUEUE;

/** A run keyed by an idempotency key: a failed run with that id may be started again, nothing else. */
function idempotentStart<W extends Workflow>(
  workflowId: string,
  args: Parameters<W>,
  searchAttributes: SearchAttributePair[],
): WorkflowStartOptions<W> {
  const options = {
    taskQueue: taskQueue(),
    workflowId,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
    args,
    typedSearchAttributes: searchAttributes,
  };
  // The SDK types `args` by a conditional on W that TypeScript cannot resolve for a generic W;
  // the callers' arguments are checked against Parameters<W> above.
  return options as unknown as WorkflowStartOptions<W>;
}

/**
 * Runs the workflow whose id is an idempotency key and waits for its result. If a run with that
 * id is going on or completed, its result is returned instead (`attached: true`); a failed run
 * may be started again.
 */
export async function runIdempotent<W extends Workflow>(
  workflow: W,
  workflowId: string,
  args: Parameters<W>,
  searchAttributes: SearchAttributePair[],
): Promise<{ result: WorkflowResultType<W>; attached: boolean }> {
  const client = await temporal();
  try {
    const handle = await client.workflow.start(workflow, idempotentStart(workflowId, args, searchAttributes));
    return { result: await handle.result(), attached: false };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return { result: await client.workflow.getHandle<W>(workflowId).result(), attached: true };
  }
}

/**
 * Starts the workflow whose id is an idempotency key without waiting for it: once the start is
 * accepted the work is durable. A run with that id going on or completed counts as started; a
 * failed one is started again.
 */
export async function startIdempotent<W extends Workflow>(
  workflow: W,
  workflowId: string,
  args: Parameters<W>,
  searchAttributes: SearchAttributePair[],
): Promise<{ started: boolean }> {
  const client = await temporal();
  try {
    await client.workflow.start(workflow, idempotentStart(workflowId, args, searchAttributes));
    return { started: true };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { started: false };
    throw err;
  }
}

/**
 * Starts the run keyed by an idempotency key (or uses the one running; a failed one is started
 * again) and executes an Update on it in one round trip (update-with-start). A run that completed
 * before the Update could reach it answers with its result, which is then the Update's answer too.
 * Using the running run counts as a start in `workflow_starts_total` (the server does not say).
 */
export async function updateWithStartIdempotent<W extends Workflow, R>(
  workflow: W,
  workflowId: string,
  args: Parameters<W>,
  searchAttributes: SearchAttributePair[],
  update: UpdateDefinition<R, []>,
): Promise<R> {
  const client = await temporal();
  const startWorkflowOperation = new WithStartWorkflowOperation(workflow, {
    ...idempotentStart(workflowId, args, searchAttributes),
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  try {
    return await client.workflow.executeUpdateWithStart(update, { startWorkflowOperation });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw err;
    const handle = client.workflow.getHandle<W>(workflowId);
    // No run to read (the start itself failed): the start's error is the one to report.
    const { status } = await handle.describe().catch(() => Promise.reject(err));
    if (status.name === 'RUNNING') throw err;
    return (await handle.result()) as R;
  }
}

/** Whether the run `workflowId` is going on or has completed (a retry then attaches to it). */
export async function runLiveOrDone(workflowId: string): Promise<boolean> {
  const client = await temporal();
  try {
    const { status } = await client.workflow.getHandle(workflowId).describe();
    return status.name === 'RUNNING' || status.name === 'COMPLETED';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
