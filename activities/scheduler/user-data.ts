/**
 * scheduler's part of a user's export and erasure (docs/privacy-components/scheduler.md): the
 * user's scheduled events, each with its Temporal Schedule (`event:<id>`, through the handed-in
 * Schedule port, as deleteScheduledEvent does), its runs, completions and runs by hand, and the
 * user's cap counters.
 */
import type { ErasureScope, UserData, UserScope } from '../core/user-data.ts';
import { listRuns } from './event-runs.ts';
import { schedules } from './port.ts';
import { listEvents } from './scheduled-events.ts';
import { deleteRunsOf, deleteUserCounters, eventsOf, removeEvent } from './store.ts';
import { eventViewB } from './views.ts';

/** Another person's id (an admin who saved the event) is not the user's data: it reads `staff`. */
const someone = (scope: UserScope, id: string | undefined) =>
  id === undefined ? null : id === scope.user_id ? id : 'staff';

export const schedulerUserData: UserData = {
  async export(scope) {
    const events = await listEvents(scope.organization_id, scope.user_id);
    const out = [];
    for (const e of events) {
      // The runs as the user reads them (a basic reader's error texts), all of them.
      const runs = await listRuns(scope.organization_id, e._id, { limit: 1_000_000 }, 0);
      out.push({ ...eventViewB(e), saved_by: someone(scope, e.actor_user_id), runs });
    }
    return { data: { events: out }, files: [] };
  },
  /**
   * Per event: its Schedule first (nothing starts any more; a Schedule already gone counts as
   * deleted), then its runs, then the event with its completions, runs by hand and places
   * (removeEvent, as the API's delete), then the runs again (a run that was in flight records
   * itself after the first pass). A crash anywhere leaves the event, which the next call finds and
   * finishes; a second call after success finds none. The user's counters go last.
   */
  async erase(scope: ErasureScope) {
    const events = await eventsOf(scope.organization_id, scope.user_id);
    let runs_deleted = 0;
    let events_deleted = 0;
    if (events.length) {
      const s = await schedules();
      for (const e of events) {
        await s.deleteSchedule(e._id);
        runs_deleted += await deleteRunsOf(e._id);
        if (await removeEvent(scope.organization_id, e._id)) events_deleted += 1;
        runs_deleted += await deleteRunsOf(e._id);
      }
    }
    const counters_deleted = await deleteUserCounters(scope.organization_id, scope.user_id);
    return { events_deleted, schedules_deleted: events.length, runs_deleted, counters_deleted };
  },
};
