/**
 * Submitting feedback is one component call (the edge only parses and authorizes): the feedback is
 * stored and its analysis started, or, when the start fails, nothing is kept.
 */
import { afterAll, describe, expect, it } from 'vitest';

import { newId } from '../../activities/core/ids.ts';
import {
  configureFeedback,
  feedbackStats,
  type StartAnalysis,
  submitFeedback,
} from '../../activities/feedback/index.ts';
import { useSuiteRuntime } from '../helpers/runtime.ts';

useSuiteRuntime();

describe('submitFeedback (activities in this process, the workflow start handed in)', () => {
  const restore = () =>
    import('../../workers/runs/starts.ts').then((m) => configureFeedback({ startAnalysis: m.startFeedbackAnalysis }));
  afterAll(restore);

  it('keeps nothing when the analysis cannot be started, and keeps the feedback once it is', async () => {
    const organization_id = newId('org');
    const since = new Date(Date.now() - 60_000);
    const started: Parameters<StartAnalysis>[0][] = [];
    configureFeedback({ startAnalysis: async () => Promise.reject(new Error('Temporal unreachable')) });
    await expect(
      submitFeedback({ organization_id, user_id: 'usr_a', feedback_type: 'praise', rating: 5, comment: 'Great' }),
    ).rejects.toThrow('Temporal unreachable');
    expect((await feedbackStats({ organization_id, from: since })).total_feedback).toBe(0);

    configureFeedback({ startAnalysis: async (f) => void started.push(f) });
    const feedback_id = await submitFeedback({
      organization_id,
      user_id: 'usr_a',
      feedback_type: 'praise',
      rating: 5,
      comment: 'Great',
    });
    expect(started).toEqual([{ feedback_id, organization_id, user_id: 'usr_a' }]);
    expect((await feedbackStats({ organization_id, from: since })).total_feedback).toBe(1);
  });
});
