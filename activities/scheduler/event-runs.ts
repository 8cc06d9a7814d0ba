/** The runs of scheduled events: a run now by hand (claimed once per key and window), the run a Schedule starts, and their records. */
import { createHash } from 'node:crypto';

import { Context } from '@temporalio/activity';

import { conflict, PlatformError } from '../core/errors.ts';
import type { ScheduledTask } from '../core/scheduled-task.ts';
import { recordEvent } from '../events/index.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { isFoldTwin, nextRuns } from './calendar.ts';
import { type Failure, INTERNAL_FAILURE_TEXT, UNCLASSED_FAILURE_TEXT } from './constants.ts';
import { taskFor } from './registry.ts';
import { checkRunRights } from './rights.ts';
import { checkLoad, duration } from './scheduled-events.ts';
import { schedulerSettings } from './settings.ts';
import {
  deleteManualRun,
  endedEvents,
  eventById,
  type EventDoc,
  eventMetadata,
  insertCompletion,
  insertManualRun,
  insertRun,
  manualKeyId,
  manualRunById,
  manualWindowId,
  runById,
  type RunDoc,
  type RunRecord,
  runsOf,
  windowClaimsNear,
} from './store.ts';

export interface ManualRun {
  at: Date;
  /** the Idempotency-Key had already started this run */
  replayed: boolean;
  /** undoes the claim when the run could not be started */
  release(): Promise<void>;
}

const tooSoon = (min: number, waitMs: number) =>
  new PlatformError(
    'rate_limited',
    `The event ran less than ${duration(min / 1000)} ago: a basic key runs it by hand only once its last run (scheduled or by hand) started at least ${duration(min / 1000)} ago (SCHEDULER_MIN_INTERVAL_SECONDS_BASIC)`,
    undefined,
    {
      // at most the interval: the Schedule's clock may run a little ahead of this process's
      'Retry-After': String(Math.max(1, Math.ceil(Math.min(waitMs, min) / 1000))),
    },
  );

/**
 * A run by hand of a caller below the admin level (docs/components/scheduler.md, Limits): refused (429 with
 * Retry-After) while the event's last run, scheduled or by hand (`lastRun`: the Schedule's recent
 * actions), started less than SCHEDULER_MIN_INTERVAL_SECONDS_BASIC ago. Exact when calls race:
 * each claim is an insert under `w|<event>|<window n>` (windows one interval long), and a claim
 * with a claim in the window before or after less than an interval away gives way (both may,
 * never both win). An ended event (store.ts `endedEvents`) is refused (409). The same Idempotency-Key answers the run it started while the event exists.
 */
export async function claimManualRun(
  e: EventDoc,
  key: string | undefined,
  lastRun: () => Promise<Date | null>,
): Promise<ManualRun> {
  const keyId = key === undefined ? null : manualKeyId(e._id, createHash('sha256').update(key).digest('hex'));
  const byKey = async () => (keyId ? await manualRunById(keyId) : null);
  const replay = (at: Date): ManualRun => ({ at, replayed: true, release: async () => undefined });
  const seen = await byKey();
  if (seen) return replay(seen.at);
  // An ended event holds no active place (or is about to give it up): run by hand, each stored
  // event would add one run per interval to what its owner may start. Refused, not revived: its
  // update takes its places back under the caps first.
  if ((await endedEvents([e])).has(e._id)) throw conflict('The event has ended; update it to run again');
  const now = new Date();
  const t = now.getTime();
  const min = schedulerSettings().SCHEDULER_MIN_INTERVAL_SECONDS_BASIC * 1000;
  const claims: Array<{ _id: string; at: Date }> = [];
  const release = async () => void (await Promise.all(claims.map((c) => deleteManualRun(c).catch(() => undefined))));
  /** null: this call holds the window; else how long to wait (ms). */
  const takeWindow = async (): Promise<number | null> => {
    if (!min) return null;
    const last = await lastRun();
    if (last && t - last.getTime() < min) return last.getTime() + min - t;
    const n = Math.floor(t / min);
    const mine = { _id: manualWindowId(e._id, n), event_id: e._id, organization_id: e.organization_id, at: now };
    if (!(await insertManualRun(mine))) {
      const held = await manualRunById(mine._id);
      return (held ? held.at.getTime() : t) + min - t;
    }
    claims.push(mine);
    const near = await windowClaimsNear(e._id, now, min, mine._id);
    return near.length ? Math.max(...near.map((d) => d.at.getTime())) + min - t : null;
  };
  try {
    const wait = await takeWindow();
    if (wait !== null) {
      await release();
      const dup = await byKey(); // a concurrent request with the same key won
      if (dup) return replay(dup.at);
      throw tooSoon(min, wait);
    }
    if (keyId) {
      const doc = { _id: keyId, event_id: e._id, organization_id: e.organization_id, at: now };
      if (!(await insertManualRun(doc))) {
        await release();
        return replay((await byKey())?.at ?? now);
      }
      claims.push(doc);
    }
  } catch (err) {
    await release();
    throw err;
  }
  return { at: now, replayed: false, release };
}

export interface RunFilter {
  status?: RunDoc['outcome'];
  from?: Date;
  to?: Date;
  limit?: number;
  offset?: number;
}

/**
 * A failed run's text as a reader of `level` sees it: an admin the detail; a basic reader the
 * platform's own answer (a 4xx: what the same request by hand gets), else a fixed text.
 */
function errorFor(r: Pick<RunDoc, 'outcome' | 'error' | 'failure'>, level: number): string | null {
  if (!r.error) return null;
  if (level >= ADMIN_LEVEL || r.outcome !== 'failed') return r.error;
  if (r.failure === 'internal') return INTERNAL_FAILURE_TEXT;
  return r.failure ? r.error : UNCLASSED_FAILURE_TEXT;
}

function failureOf(err: unknown): Failure {
  if (!(err instanceof PlatformError) || !err.byClient) return 'internal';
  if (err.kind === 'forbidden') return 'not_allowed';
  return err.kind === 'conflict' || err.kind === 'rate_limited' ? 'limit' : 'refused';
}

/** Where a run's failure detail goes besides its record: the worker's log (Temporal's activity logger). */
function logFailure(fields: Record<string, unknown>, message: string): void {
  try {
    Context.current().log.warn(message, fields);
  } catch {
    process.stderr.write(`${JSON.stringify({ level: 'warn', msg: message, ...fields })}\n`); // outside a worker
  }
}

/** An event's runs, newest first; `from`/`to` bound the start time (inclusive); errors as a reader of `level` may see them. */
export async function listRuns(organization_id: string, event_id: string, f: RunFilter = {}, level = 0) {
  const started = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lte: f.to } : {}) };
  const filter = {
    organization_id,
    event_id,
    ...(f.status ? { outcome: f.status } : {}),
    ...(f.from || f.to ? { started_at: started } : {}),
  };
  const runs = await runsOf(filter, f.offset ?? 0, f.limit ?? 100);
  return runs.map((r) => ({
    run_id: r._id,
    time: r.started_at.toISOString(),
    scheduled_time: r.scheduled_time?.toISOString() ?? null,
    trigger: r.trigger,
    outcome: r.outcome,
    failure: r.outcome === 'failed' ? (r.failure ?? null) : null,
    error: errorFor(r, level),
    result: r.result,
  }));
}

/**
 * One run of an event (activity of the run workflow): dispatch `execute_scheduled_task` to the
 * component's task and record the outcome once per run. A run whose time is not on the event's
 * rule came from "execute now".
 */
export async function runScheduledEvent(input: {
  event_id: string;
  organization_id: string;
  run_id: string;
  scheduled_time: string | null;
  max_attempts: number;
}) {
  const started_at = new Date();
  // Both reads at once: a run already recorded (a retried activity) answers from its record.
  const [recorded, event] = await Promise.all([
    runById(input.run_id),
    eventById(input.organization_id, input.event_id),
  ]);
  if (recorded) {
    // An earlier attempt recorded the run and may have stopped before recording its event.
    if (recorded.outcome === 'failed') await publishRunFailed(recorded, event);
    return { outcome: recorded.outcome, error: recorded.error ?? null };
  }
  const scheduled = input.scheduled_time ? new Date(input.scheduled_time) : null;
  let trigger: 'scheduled' | 'manual' = 'manual';
  if (event && scheduled) {
    const timing = {
      start: event.start_event,
      end: event.end_date,
      recurrency: event.recurrency,
      cron: event.cron,
      timezone: event.timezone,
    };
    const onRule = nextRuns(timing, new Date(scheduled.getTime() - 1000), 1)[0];
    if (onRule && Math.abs(onRule.getTime() - scheduled.getTime()) < 1000) trigger = 'scheduled';
    else if (isFoldTwin(timing, scheduled)) {
      // Temporal may start both occurrences of a time repeated when the clock goes back; the rule
      // runs the second, so the first does nothing (and is not recorded as a run by hand).
      return { outcome: 'skipped' as const, error: 'the first occurrence of a repeated local time' };
    }
  }
  let outcome: RunDoc['outcome'] = 'success';
  let error: string | undefined;
  let failure: Failure | undefined;
  let result: Record<string, unknown> | undefined;
  if (!event) {
    outcome = 'skipped';
    error = 'event was deleted';
  } else {
    const metadata = eventMetadata(event);
    try {
      // Rights are checked again at each run: the saver's key may be revoked since.
      const actor_level = await checkRunRights(event, metadata);
      checkLoad(event, actor_level);
      const task: ScheduledTask = {
        action: 'execute_scheduled_task',
        event_id: event._id,
        run_id: input.run_id,
        user_id: event.user_id,
        idp_id: event.idp_id,
        organization_id: event.organization_id,
        metadata,
        actor_level,
      };
      result = await taskFor(event.type_of_event).run(task);
    } catch (err) {
      // A client-side problem (bad metadata, component missing) is recorded at once; anything
      // else is retried by Temporal with backoff, and recorded when the last attempt fails too.
      if (!(err instanceof PlatformError) && currentAttempt() < input.max_attempts) throw err;
      outcome = 'failed';
      error = (err as Error).message;
      failure = failureOf(err);
      if (failure === 'internal')
        logFailure(
          { event_id: event._id, organization_id: event.organization_id, run_id: input.run_id, error },
          `scheduled run failed: ${error}`,
        );
    }
    if (!event.recurrency && trigger === 'scheduled') await insertCompletion(event, input.run_id);
  }
  await insertRun({
    _id: input.run_id,
    event_id: input.event_id,
    organization_id: input.organization_id,
    trigger,
    scheduled_time: scheduled ?? undefined,
    started_at,
    finished_at: new Date(),
    outcome,
    error,
    failure,
    result: result ?? null,
  });
  if (outcome === 'failed') {
    // The record written once per run is what is told (a concurrent attempt's may have won).
    const stored = await runById(input.run_id);
    if (stored?.outcome === 'failed') await publishRunFailed(stored, event);
  }
  return { outcome, error: error ?? null };
}

/**
 * The event `scheduled_event.run_failed` of a run recorded as failed: keyed by the run id, so it is
 * told once per run, however many attempts the run took (only the last one, or a refusal that is
 * not retried, records the failure) and however often a retry finds the record. The kind of
 * failure is told, not its message: the message (in the run list, for admins) can quote a
 * recipient's address or a provider's answer, and events outlive it in receivers' systems.
 */
async function publishRunFailed(run: RunRecord, event: EventDoc | null): Promise<void> {
  await recordEvent({
    organization_id: run.organization_id,
    type: 'scheduled_event.run_failed',
    key: run._id,
    at: run.finished_at,
    data: {
      event_id: run.event_id,
      run_id: run._id,
      user_id: event?.user_id ?? null,
      type_of_event: event?.type_of_event ?? null,
      trigger: run.trigger,
      scheduled_time: run.scheduled_time ? new Date(run.scheduled_time).toISOString() : null,
      started_at: new Date(run.started_at).toISOString(),
      finished_at: new Date(run.finished_at).toISOString(),
      failure: run.failure ?? null,
    },
  });
}

function currentAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return Number.POSITIVE_INFINITY; // called outside an activity: no retries to wait for
  }
}
