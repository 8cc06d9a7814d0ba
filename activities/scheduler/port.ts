/**
 * What the scheduler needs of each event's Temporal Schedule (`event:<event id>`). The component
 * does not hold a Temporal client: the composition root hands the implementation in
 * (`configureScheduler`, workers/root.ts; workers/runs/event-schedules.ts implements it).
 */
import { handedIn } from '../core/wiring.ts';
import type { Overlap } from './constants.ts';
import type { EventDoc } from './store.ts';

export interface SchedulePort {
  createSchedule(e: EventDoc): Promise<void>;
  /** in place: the Schedule's id, history and run list stay */
  updateSchedule(e: EventDoc): Promise<void>;
  /** a Schedule already gone counts as deleted */
  deleteSchedule(event_id: string): Promise<void>;
  /** 404 when the Schedule is gone */
  pauseSchedule(event_id: string, paused: boolean, note: string | null): Promise<void>;
  /** the Schedule's own trigger: `admin` starts whatever runs; else the event's overlap policy (never allow_all); answers `at` */
  triggerSchedule(event_id: string, overlap?: Overlap | 'admin', at?: Date): Promise<Date>;
  /** an admin's run now under an Idempotency-Key: the same key on the same event starts one run */
  runOnce(e: EventDoc, key: string): Promise<{ at: Date; replayed: boolean }>;
  /** when the Schedule last started a run (on time or by hand); null: none yet; 404 when gone */
  lastActionAt(event_id: string): Promise<Date | null>;
}

/** The Schedules, or what loads them on first use (a process that never manages events never loads them). */
export type ScheduleProvider = SchedulePort | (() => Promise<SchedulePort>);

const provided = handedIn<ScheduleProvider>("the scheduler's Temporal Schedules");
let loaded: Promise<SchedulePort> | undefined;

/** Hands the scheduler its Schedules (the composition root, once per process). */
export function configureScheduler(deps: { schedules: ScheduleProvider }): void {
  provided.set(deps.schedules);
  loaded = undefined;
}

/** The Schedules handed in; none is the process's wiring fault. */
export function schedules(): Promise<SchedulePort> {
  const p = provided.get();
  if (typeof p !== 'function') return Promise.resolve(p);
  loaded ??= p().catch((err) => {
    loaded = undefined; // the next call tries again
    throw err;
  });
  return loaded;
}
