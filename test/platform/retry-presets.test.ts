/**
 * The platform's retry contract on the real Temporal server: a PlatformError raised by an activity
 * crosses Temporal through the platform's own activity wrapper; a server-side one (5xx) keeps the
 * retries of the preset in workflows/retry.ts, a client error (4xx) is attempted once and fails
 * the run with the platform's failure. A worker started here (in this process, on a task queue
 * of its own) runs test/fixtures/retry-workflow.ts with activities that count their attempts.
 */
import { fileURLToPath } from 'node:url';

import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { PlatformError } from '../../activities/core/errors.ts';
import { mapError } from '../../edge/errors.ts';
import { wrapActivities } from '../../workers/activity-wrapper.ts';
import { PLATFORM_FAILURE_TYPE } from '../../workflows/failures.ts';
import { retryPresetWorkflow, type StepActivities, type StepInput } from '../fixtures/retry-workflow.ts';
import { unique } from '../helpers/api.ts';

const queue = unique('retry-presets');
const attempts = new Map<string, number>();
const compensations = new Map<string, number>();

const activities: StepActivities = {
  async flakyStep(input) {
    const n = (attempts.get(input.key) ?? 0) + 1;
    attempts.set(input.key, n);
    if (n <= input.failures)
      throw new PlatformError(
        input.status,
        `attempt ${n} refused with ${input.status}`,
        'step',
        input.status === 429 ? { 'Retry-After': '7' } : undefined,
      );
    return { attempts: n };
  },
  async compensate(key) {
    compensations.set(key, (compensations.get(key) ?? 0) + 1);
  },
};

let client: Client;
let nativeConnection: NativeConnection;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  const env = inject('platformEnv');
  Runtime.install({ logger: new DefaultLogger('WARN') }); // the worker's state changes are noise here
  nativeConnection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
  worker = await Worker.create({
    connection: nativeConnection,
    namespace: env.TEMPORAL_NAMESPACE,
    taskQueue: queue,
    workflowsPath: fileURLToPath(new URL('../fixtures/retry-workflow.ts', import.meta.url)),
    activities: wrapActivities({ ...activities }),
  });
  running = worker.run();
  client = new Client({
    connection: await Connection.connect({ address: env.TEMPORAL_ADDRESS }),
    namespace: env.TEMPORAL_NAMESPACE,
  });
});

afterAll(async () => {
  if (worker && worker.getState() === 'RUNNING') worker.shutdown();
  await running;
  await nativeConnection?.close();
  await client?.connection.close();
});

function run(input: Omit<StepInput, 'key'>) {
  const key = unique('step');
  const result = client.workflow.execute(retryPresetWorkflow, {
    taskQueue: queue,
    workflowId: key,
    args: [{ ...input, key }],
  });
  return { key, result };
}

/**
 * The ApplicationFailure a failed run carries: under an ActivityFailure for an activity, directly
 * for a local activity.
 */
async function platformFailure(result: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  let failure = (err as WorkflowFailedError).cause;
  if (failure instanceof ActivityFailure) failure = failure.cause;
  expect(failure).toBeInstanceOf(ApplicationFailure);
  return failure as ApplicationFailure;
}

describe.each([
  ['an activity', false],
  ['a local activity', true],
])('a PlatformError thrown by %s', (_kind, local) => {
  it('with a 503 is retried under the INTERACTIVE preset until the step succeeds', async () => {
    const { key, result } = run({ failures: 2, status: 503, preset: 'INTERACTIVE', local });
    expect(await result).toEqual({ attempts: 3 });
    expect(attempts.get(key)).toBe(3);
    expect(compensations.get(key)).toBeUndefined();
  });

  it('with a 422 is attempted exactly once: the run fails with the platform failure and compensates', async () => {
    const { key, result } = run({ failures: 99, status: 422, preset: 'INTERACTIVE', local });
    const failure = await platformFailure(result);
    expect(failure).toMatchObject({
      type: PLATFORM_FAILURE_TYPE,
      nonRetryable: true,
      message: 'attempt 1 refused with 422',
    });
    expect(failure.details).toEqual([{ status: 422, field: 'step', headers: null }]);
    expect(attempts.get(key)).toBe(1);
    expect(compensations.get(key)).toBe(1);
  });

  it('with a 503 on its last attempt fails as a server error: retryable, and nothing compensated as a refusal', async () => {
    const { key, result } = run({ failures: 99, status: 503, preset: 'ONCE', local });
    const failure = await platformFailure(result);
    expect(failure).toMatchObject({ type: PLATFORM_FAILURE_TYPE, nonRetryable: false });
    expect(failure.details).toEqual([{ status: 503, field: 'step', headers: null }]);
    expect(attempts.get(key)).toBe(1);
    expect(compensations.get(key)).toBeUndefined();
  });

  it('with a 429 and Retry-After reaches the HTTP answer with its status, text and Retry-After', async () => {
    const { result } = run({ failures: 99, status: 429, preset: 'INTERACTIVE', local });
    const err = await result.then(
      () => undefined,
      (e: unknown) => e,
    );
    const mapped = mapError(err, 'detail', () => undefined);
    expect(mapped).toMatchObject({
      status: 429,
      body: { detail: 'attempt 1 refused with 429' },
      headers: { 'Retry-After': '7' },
    });
  });
});
