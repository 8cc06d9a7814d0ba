import { describe, expect, it } from 'vitest';

import { basicUser, call, newTenant } from '../helpers/api.ts';

const SUBMISSIONS = [
  {
    feedback_type: 'praise',
    rating: 5,
    title: 'Love it',
    comment: 'The app is fast and redeeming points for gifts is easy. Great rewards!',
  },
  {
    feedback_type: 'complaint',
    rating: 1,
    title: 'Crashes',
    comment: 'The app crashes every time I scan a receipt. Terrible and slow.',
  },
  {
    feedback_type: 'bug',
    rating: 2,
    title: 'Login error',
    comment: 'I get an error when I try to login with my password.',
  },
  { feedback_type: 'general', rating: 4, title: 'Support', comment: 'The support agent was helpful and friendly.' },
  { feedback_type: 'feature_request', rating: 3, comment: 'Please add an option to export my points history.' },
];

async function stats(key: string, query = ''): Promise<any> {
  const res = await call('GET', `/api/feedback/stats${query}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.stats;
}

describe('feedback', () => {
  it('stores feedback, analyses it in the background and reports stats exact to what was submitted', async () => {
    const t = await newTenant();
    const user = await basicUser(t);
    for (const s of SUBMISSIONS) {
      const res = await call('POST', '/api/feedback/submit', { key: user.key, json: { user_id: user.user_id, ...s } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ success: true, feedback_id: expect.stringMatching(/^fb_/) });
    }
    let st: any;
    for (let i = 0; i < 100; i += 1) {
      st = await stats(t.adminKey);
      if (st.pending_analysis === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(st.total_feedback).toBe(5);
    expect(st.analysed).toBe(5);
    expect(st.average_rating).toBe(3); // (5+1+2+4+3)/5
    expect(st.sentiment_distribution).toEqual({ positive: 2, neutral: 1, negative: 2 });
    expect(st.category_distribution).toMatchObject({
      app_performance: 2,
      rewards: 2,
      scanning: 1,
      account: 1,
      bugs: 1,
      customer_service: 1,
      features: 1,
    });
    expect(st.praise_distribution).toMatchObject({ rewards: 1, customer_service: 1 });
    expect(st.complaint_distribution).toMatchObject({ scanning: 1 });
    expect(st.type_distribution).toEqual({ praise: 1, complaint: 1, bug: 1, general: 1, feature_request: 1 });

    const complaints = await stats(t.adminKey, '?feedback_type=complaint');
    expect(complaints).toMatchObject({ total_feedback: 1, average_rating: 1, sentiment_distribution: { negative: 1 } });
    expect((await stats(t.adminKey, '?from=2000-01-01&to=2000-02-01')).total_feedback).toBe(0);
    expect((await stats(t.adminKey, `?from=${new Date(Date.now() - 3_600_000).toISOString()}`)).total_feedback).toBe(5);
    // organization isolation, admin only
    expect((await stats((await newTenant()).adminKey)).total_feedback).toBe(0);
    expect((await call('GET', '/api/feedback/stats', { key: user.key })).status).toBe(403);
    expect(
      (
        await call('GET', `/api/feedback/stats?organization_id=${t.organization_id}`, {
          key: (await newTenant()).adminKey,
        })
      ).status,
    ).toBe(403);
  });

  it.each([
    [{ rating: 6 }, /^rating/],
    [{ rating: 3.5 }, /^rating/],
    [{ rating: 0 }, /^rating/],
    [{ feedback_type: 'rant' }, /^feedback_type/],
    [{ comment: undefined, title: undefined }, /^comment: a title or a comment is required/],
    [{ comment: 'x'.repeat(5001) }, /^comment/],
  ])('refuses %j with 422 and stores nothing', async (patch, detail) => {
    const t = await newTenant();
    const user = await basicUser(t);
    const res = await call('POST', '/api/feedback/submit', {
      key: user.key,
      json: { user_id: user.user_id, feedback_type: 'general', rating: 4, title: 't', comment: 'c', ...patch },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(detail);
    expect((await stats(t.adminKey)).total_feedback).toBe(0);
  });
});
