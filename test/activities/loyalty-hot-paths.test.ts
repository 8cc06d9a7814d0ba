/**
 * The hot paths of the points ledger (award points, with and without an idempotency key, within
 * an action's limit or past it; balance; a history page; the newest entry of a user this process
 * has not seen) reach the database only by `_id`, so neither server answers them by scanning a
 * ledger that grows with users. Every query they send is recorded (mongoose's debug hook) and its
 * filter checked.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { queriesOf, show, type Query } from '../helpers/queries';
import { useSuiteRuntime } from '../helpers/runtime';
import { getBalance, getHistory, headFromProbes } from '../../activities/loyalty/ledger';
import { awardAction, putRules } from '../../activities/loyalty/rules';

const org = `hot-loyalty-${Date.now()}`;

useSuiteRuntime();

beforeAll(async () => {
  // Once per process the ledger is asked whether it holds entries older than operation documents
  // (store.ts): done here, before anything is recorded.
  await awardAction({ organization_id: org, user_id: 'warm-up', action_type: 'purchase', actor_level: 1 });
});


const notById = (qs: Query[]) => show(qs.filter((q) => !('_id' in q.filter)));

describe('ledger hot paths keyed for both servers', () => {
  it('awards points with and without an idempotency key, and answers a repeated key, by _id only', async () => {
    const user_id = `usr_award${Date.now()}`;
    const qs = await queriesOf(async () => {
      expect((await awardAction({ organization_id: org, user_id, action_type: 'purchase', actor_level: 1 })).duplicate).toBe(false);
      const first = await awardAction({ organization_id: org, user_id, action_type: 'purchase', operation_id: 'k-1', actor_level: 1 });
      const again = await awardAction({ organization_id: org, user_id, action_type: 'purchase', operation_id: 'k-1', actor_level: 1 });
      expect(again).toMatchObject({ duplicate: true, entry: { entry_id: first.entry.entry_id } });
    });
    expect(qs.length).toBeGreaterThan(0);
    expect(notById(qs)).toEqual([]);
  });

  it("awards a limited action, answers its idempotency key again and refuses past the limit, by _id only", async () => {
    const user_id = `usr_daily${Date.now()}`;
    const qs = await queriesOf(async () => {
      const first = await awardAction({ organization_id: org, user_id, action_type: 'daily_login', operation_id: 'd-1', actor_level: 0 });
      expect(first.duplicate).toBe(false);
      expect(await awardAction({ organization_id: org, user_id, action_type: 'daily_login', operation_id: 'd-1', actor_level: 0 })).toMatchObject({ duplicate: true, entry: { entry_id: first.entry.entry_id } });
      await expect(awardAction({ organization_id: org, user_id, action_type: 'daily_login', operation_id: 'd-2', actor_level: 0 })).rejects.toMatchObject({ status: 409 });
      // The refused request sent again
      await expect(awardAction({ organization_id: org, user_id, action_type: 'daily_login', operation_id: 'd-2', actor_level: 0 })).rejects.toMatchObject({ status: 409 });
      await expect(awardAction({ organization_id: org, user_id, action_type: 'daily_login', actor_level: 0 })).rejects.toMatchObject({ status: 409 });
    });
    expect(notById(qs)).toEqual([]);
  });

  it('finds the first free slot of a limit above four by _id reads', async () => {
    const limited = `${org}-ten`;
    await putRules(limited, { actions: { visit: { points: 3, self_service: true, limit: { max: 10, per: 'day' } } } }, 'test');
    const user_id = `usr_slots${Date.now()}`;
    for (let i = 0; i < 6; i += 1) await awardAction({ organization_id: limited, user_id, action_type: 'visit', actor_level: 0 });
    const qs = await queriesOf(async () => {
      expect((await awardAction({ organization_id: limited, user_id, action_type: 'visit', operation_id: 'v-7', actor_level: 0 })).balance).toBe(21);
    });
    expect(qs.filter((q) => q.collection === 'ledger_operations').length).toBeGreaterThan(1); // the slots were searched
    expect(notById(qs)).toEqual([]);
  });

  it('answers balance, a history page and an unseen head by _id only', async () => {
    const user_id = `usr_read${Date.now()}`;
    for (let i = 0; i < 25; i += 1) await awardAction({ organization_id: org, user_id, action_type: 'purchase', actor_level: 1 });
    const qs = await queriesOf(async () => {
      expect((await getBalance(org, user_id)).points).toBe(250);
      const page = await getHistory(org, user_id, 2, 10);
      expect(page.entries.map((e) => e.seq)).toEqual([15, 14, 13, 12, 11, 10, 9, 8, 7, 6]);
      expect(await headFromProbes(org, user_id)).toMatchObject({ seq: 25, balance: 250 });
    });
    expect(qs.length).toBeGreaterThan(0);
    expect(notById(qs)).toEqual([]);
  });
});
