/** The feedback component's scheduled task: the organization's feedback statistics, optionally emailed. */
import type { TaskDefinition } from '../core/scheduled-task.ts';
import { mailOnce, periodDays } from '../email/index.ts';
import { feedbackStats } from './feedback.ts';

export const feedbackTask: TaskDefinition = {
  admin_only: "the organization's feedback statistics",
  mails_report: true,
  /** over metadata.period_days (default 7), emailed to metadata.recipient when given */
  async run(task) {
    const days = periodDays(task.metadata);
    const stats = await feedbackStats({
      organization_id: task.organization_id,
      from: new Date(Date.now() - days * 86_400_000),
    });
    const recipient = task.metadata.recipient;
    if (typeof recipient !== 'string') return { period_days: days, stats };
    const lines = [
      `Feedback in the last ${days} day(s): ${stats.total_feedback} (average rating ${stats.average_rating.toFixed(2)}).`,
      `Sentiment: ${Object.entries(stats.sentiment_distribution)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
      `Categories: ${
        Object.entries(stats.category_distribution)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none'
      }.`,
    ];
    const sent = await mailOnce(task, {
      recipient,
      metadata: { subject: `Feedback summary: last ${days} day(s)`, body: lines.join('\n\n') },
    });
    return { period_days: days, stats, ...sent };
  },
};
