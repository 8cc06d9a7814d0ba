/** The edge's Temporal client, connected once per process. */
import { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { config } from '../activities/config';

let client: Promise<Client> | undefined;

export function temporal(): Promise<Client> {
  client ??= (async () => {
    const cfg = config();
    const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS!, connectTimeout: 5000 });
    return new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
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

/**
 * Runs the workflow whose id is an idempotency key and waits for its result. If a run with that
 * id is going on or completed, its result is returned instead (`attached: true`); a failed run
 * may be started again.
 */
export async function runIdempotent<R>(workflowType: string, workflowId: string, args: unknown[], searchAttributes: SearchAttributePair[]): Promise<{ result: R; attached: boolean }> {
  const client = await temporal();
  try {
    const handle = await client.workflow.start(workflowType, {
      taskQueue: taskQueue(),
      workflowId,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      args,
      typedSearchAttributes: searchAttributes,
    });
    return { result: (await handle.result()) as R, attached: false };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return { result: (await client.workflow.getHandle(workflowId).result()) as R, attached: true };
  }
}

/**
 * Starts the workflow whose id is an idempotency key without waiting for it: once the start is
 * accepted the work is durable. A run with that id going on or completed counts as started; a
 * failed one is started again.
 */
export async function startIdempotent(workflowType: string, workflowId: string, args: unknown[], searchAttributes: SearchAttributePair[]): Promise<{ started: boolean }> {
  const client = await temporal();
  try {
    await client.workflow.start(workflowType, { taskQueue: taskQueue(), workflowId, workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY, args, typedSearchAttributes: searchAttributes });
    return { started: true };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { started: false };
    throw err;
  }
}
