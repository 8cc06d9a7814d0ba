/** Normalized responses leave with their conversation, and with age via the retention Schedule. */
import { describe, expect, inject, it } from 'vitest';

import { retentionScheduleId } from '../../workers/runs/platform-schedules.ts';
import { basicUser, call, newTenant } from '../helpers/api.ts';
import { useSuiteClients } from '../helpers/runtime.ts';

const suite = useSuiteClients();

describe('DELETE /conversations/{conversation_id}', () => {
  it('removes the conversation and its normalized responses', async () => {
    const t = await newTenant();
    const u = await basicUser(t);
    const init = await call('POST', '/initialize_session', { key: u.key, json: { user_id: u.user_id } });
    const conv = init.body.conversation_id;
    await call('POST', '/process_text', {
      key: u.key,
      json: { text: 'First note.', user_id: u.user_id, conversation_id: conv },
    });
    await call('POST', '/process_text', {
      key: u.key,
      json: { text: 'Second note.', user_id: u.user_id, conversation_id: conv },
    });
    const peer = await basicUser(t);
    expect((await call('DELETE', `/conversations/${conv}?user_id=${u.user_id}`, { key: peer.key })).status).toBe(403);
    const del = await call('DELETE', `/conversations/${conv}?user_id=${u.user_id}`, { key: u.key });
    expect(del.body).toEqual({
      success: true,
      conversation_id: conv,
      deleted_conversation: true,
      deleted_responses: 2,
    });
    expect((await call('GET', `/get_response/${conv}?user_id=${u.user_id}`, { key: u.key })).status).toBe(404);
    expect(
      (await call('POST', '/verify_session', { key: u.key, json: { user_id: u.user_id, conversation_id: conv } })).body
        .valid,
    ).toBe(false);
    const again = await call('DELETE', `/conversations/${conv}?user_id=${u.user_id}`, { key: u.key });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ detail: 'Conversation not found' });
  });
});

describe('retention Schedule', () => {
  it('exists, runs hourly, and deletes responses older than the retention when triggered', async () => {
    const handle = suite.temporal.schedule.getHandle(retentionScheduleId(inject('platformEnv').TEMPORAL_TASK_QUEUE));
    const described = await handle.describe();
    expect(described.spec.intervals?.[0].every).toBe(3_600_000);
    expect(described.action).toMatchObject({ workflowType: 'retentionWorkflow', args: [{ retention_days: 90 }] });
    const old = new Date(Date.now() - 91 * 86_400_000);
    const recent = new Date(Date.now() - 89 * 86_400_000);
    await suite.db.collection('normalized_responses').insertMany([
      {
        response_id: `old-${Date.now()}`,
        conversation_id: 'c-old',
        user_id: 'u',
        organization_id: 'retention',
        source: 'test',
        message: 'old',
        metadata_json: '{}',
        created_at: old,
      },
      {
        response_id: `recent-${Date.now()}`,
        conversation_id: 'c-recent',
        user_id: 'u',
        organization_id: 'retention',
        source: 'test',
        message: 'recent',
        metadata_json: '{}',
        created_at: recent,
      },
    ]);
    const runsBefore = described.info.numActionsTaken;
    await handle.trigger();
    let left: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      left = (await suite.db.collection('normalized_responses').find({ organization_id: 'retention' }).toArray()).map(
        (d) => d.message as string,
      );
      if (!left.includes('old')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(left).toEqual(['recent']);
    expect((await handle.describe()).info.numActionsTaken).toBeGreaterThan(runsBefore);
  });
});
