/**
 * Set-up shared by the scheduler tests that call the activities in this process: the suite's
 * configuration with some settings changed, a daily event, and a basic user as owner and saver.
 */
import { inject } from 'vitest';

import { parseEnv, setConfig } from '../../activities/core/config.ts';
import type { EventInput } from '../../activities/scheduler/scheduled-events.ts';
import { basicUser, newTenant, type Tenant } from './api.ts';

export const loyalty = { action_type: 'daily_login' };

/** The suite's configuration with some settings changed, for the activities called in this process. */
export const configure = (extra: Record<string, string> = {}) =>
  setConfig(parseEnv({ ...process.env, ...inject('platformEnv'), ...extra }));

export const daily = (start = '2031-01-05T09:30:00Z'): EventInput => ({
  type_of_event: 'loyalty',
  recurrency: 'daily',
  start_event: new Date(start),
  end_date: null,
  metadata: loyalty,
});

/** A basic user of a new (or the given) organization, as an event's owner and as the saving actor. */
export async function basicOwner(tenant?: Tenant) {
  const t = tenant ?? (await newTenant());
  const u = await basicUser(t);
  return {
    t,
    u,
    owner: { organization_id: t.organization_id, user_id: u.user_id, idp_id: u.idp_id },
    actor: { key_id: 'key_test', user_id: u.user_id, level: 0 },
  };
}
