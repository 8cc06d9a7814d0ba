/**
 * The hot paths of the points ledger (award points, with and without an idempotency key, within
 * an action's limit or past it; balance; a history page; the newest entry of a user this process
 * has not seen) are answered from indexes, so neither server answers them by scanning a ledger
 * that grows with users: every query they send is recorded (mongoose's debug hook) and the server
 * is asked how it answers it (`explain`). Their database commands are counted too.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { onCommandTimed } from '../../activities/core/db/index.ts';
import { awardAction } from '../../activities/loyalty/awards.ts';
import { getBalance, getHistory, ledgerHead } from '../../activities/loyalty/ledger.ts';
import { putRules } from '../../activities/loyalty/rules.ts';
import { queriesOf, scans } from '../helpers/queries.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

const org = `hot-loyalty-${Date.now()}`;

useSuiteRuntime();

beforeAll(async () => {
  await awardAction({ organization_id: org, user_id: 'warm-up', action_type: 'purchase', actor_level: 1 });
});

/** The ledger's database commands a piece of work sends, as `<collection>.<command>`, in order. */
async function ledgerCommandsOf(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const off = onCommandTimed((collection, command) => {
    if (collection.startsWith('ledger')) seen.push(`${collection}.${command}`);
  });
  try {
    await work();
  } finally {
    off();
  }
  return seen;
}

describe('ledger hot paths answered from indexes', () => {
  it('awards points with and without an idempotency key, and answers a repeated key, from indexes', async () => {
    const user_id = `usr_award${Date.now()}`;
    const qs = await queriesOf(async () => {
      expect(
        (await awardAction({ organization_id: org, user_id, action_type: 'purchase', actor_level: 1 })).duplicate,
      ).toBe(false);
      const first = await awardAction({
        organization_id: org,
        user_id,
        action_type: 'purchase',
        operation_id: 'k-1',
        actor_level: 1,
      });
      const again = await awardAction({
        organization_id: org,
        user_id,
        action_type: 'purchase',
        operation_id: 'k-1',
        actor_level: 1,
      });
      expect(again).toMatchObject({ duplicate: true, entry: { entry_id: first.entry!.entry_id } });
    });
    expect(qs.length).toBeGreaterThan(0);
    expect(await scans(qs)).toEqual([]);
  });

  it('awards with a new idempotency key in two commands (the head read and the insert), one when the head is kept', async () => {
    const user_id = `usr_cmds${Date.now()}`;
    const fresh = await ledgerCommandsOf(() =>
      awardAction({ organization_id: org, user_id, action_type: 'purchase', operation_id: 'c-1', actor_level: 1 }),
    );
    expect(fresh).toEqual(['ledger_entries.find', 'ledger_entries.insert']);
    // The same key again, within a second: drafted on the head this process wrote (no read); the
    // insert is refused by the operation index, which then answers.
    const repeated = await ledgerCommandsOf(() =>
      awardAction({ organization_id: org, user_id, action_type: 'purchase', operation_id: 'c-1', actor_level: 1 }),
    );
    expect(repeated).toEqual(['ledger_entries.insert', 'ledger_entries.find']);
  });

  it('awards a limited action, answers its idempotency key again and refuses past the limit, from indexes', async () => {
    const user_id = `usr_daily${Date.now()}`;
    const qs = await queriesOf(async () => {
      const first = await awardAction({
        organization_id: org,
        user_id,
        action_type: 'daily_login',
        operation_id: 'd-1',
        actor_level: 0,
      });
      expect(first.duplicate).toBe(false);
      expect(
        await awardAction({
          organization_id: org,
          user_id,
          action_type: 'daily_login',
          operation_id: 'd-1',
          actor_level: 0,
        }),
      ).toMatchObject({ duplicate: true, entry: { entry_id: first.entry!.entry_id } });
      await expect(
        awardAction({ organization_id: org, user_id, action_type: 'daily_login', operation_id: 'd-2', actor_level: 0 }),
      ).rejects.toMatchObject({ status: 409 });
      // The refused request sent again
      await expect(
        awardAction({ organization_id: org, user_id, action_type: 'daily_login', operation_id: 'd-2', actor_level: 0 }),
      ).rejects.toMatchObject({ status: 409 });
      await expect(
        awardAction({ organization_id: org, user_id, action_type: 'daily_login', actor_level: 0 }),
      ).rejects.toMatchObject({ status: 409 });
    });
    expect(await scans(qs)).toEqual([]);
  });

  it("reads a limited action's earnings in the window with one query, answered from an index", async () => {
    const limited = `${org}-ten`;
    await putRules(
      limited,
      { actions: { visit: { points: 3, self_service: true, limit: { max: 10, per: 'day' } } } },
      'test',
    );
    const user_id = `usr_slots${Date.now()}`;
    for (let i = 0; i < 6; i += 1)
      await awardAction({ organization_id: limited, user_id, action_type: 'visit', actor_level: 0 });
    let commands: string[] = [];
    const qs = await queriesOf(async () => {
      commands = await ledgerCommandsOf(async () => {
        expect(
          (
            await awardAction({
              organization_id: limited,
              user_id,
              action_type: 'visit',
              operation_id: 'v-7',
              actor_level: 0,
            })
          ).balance,
        ).toBe(21);
      });
    });
    // Was the key used (by operation, by request), the window's earnings, the insert (on the head
    // the six awards before left, kept by this process: no read).
    expect(commands).toEqual([
      'ledger_entries.find',
      'ledger_entries.find',
      'ledger_entries.find',
      'ledger_entries.insert',
    ]);
    expect(await scans(qs)).toEqual([]);
    // The limit holds past the six plus this one: three more, then 409.
    for (let i = 0; i < 3; i += 1)
      await awardAction({ organization_id: limited, user_id, action_type: 'visit', actor_level: 0 });
    await expect(
      awardAction({ organization_id: limited, user_id, action_type: 'visit', actor_level: 0 }),
    ).rejects.toMatchObject({ status: 409 });
    expect((await getBalance(limited, user_id)).points).toBe(30);
  });

  it('credits a limited award once however many copies of one keyed request arrive at once', async () => {
    const limited = `${org}-copies`;
    await putRules(
      limited,
      { actions: { visit: { points: 1, self_service: true, limit: { max: 50, per: 'day' } } } },
      'test',
    );
    const user_id = `usr_copies${Date.now()}`;
    for (let i = 0; i < 3; i += 1)
      await awardAction({ organization_id: limited, user_id, action_type: 'visit', actor_level: 0 });
    for (let round = 0; round < 6; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 12 }, () =>
          awardAction({
            organization_id: limited,
            user_id,
            action_type: 'visit',
            operation_id: `copy-${round}`,
            actor_level: 0,
          }),
        ),
      );
      expect(answers.filter((a) => !a.duplicate)).toHaveLength(1);
      expect((await getBalance(limited, user_id)).points).toBe(4 + round);
    }
  });

  it('answers balance, a history page and an unseen head from indexes, in one query each but the page (two)', async () => {
    const user_id = `usr_read${Date.now()}`;
    for (let i = 0; i < 25; i += 1)
      await awardAction({ organization_id: org, user_id, action_type: 'purchase', actor_level: 1 });
    const balance = await queriesOf(async () => expect((await getBalance(org, user_id)).points).toBe(250));
    const history = await queriesOf(async () => {
      const page = await getHistory(org, user_id, 2, 10);
      expect(page.entries.map((e) => e.seq)).toEqual([15, 14, 13, 12, 11, 10, 9, 8, 7, 6]);
      expect(page).toMatchObject({ total: 25, has_more: true });
    });
    const head = await queriesOf(async () =>
      expect(await ledgerHead(org, user_id)).toMatchObject({ seq: 25, balance: 250 }),
    );
    expect([balance.length, history.length, head.length]).toEqual([1, 2, 1]);
    expect(await scans([...balance, ...history, ...head])).toEqual([]);
    // The last page, short, and a page past the end.
    expect((await getHistory(org, user_id, 3, 10)).entries.map((e) => e.seq)).toEqual([5, 4, 3, 2, 1]);
    expect(await getHistory(org, user_id, 4, 10)).toMatchObject({ entries: [], total: 25, has_more: false });
  });
});
