/** The billing component's scheduled task: the owner's token usage report, emailed. */
import { PlatformError } from '../core/errors.ts';
import type { TaskDefinition } from '../core/scheduled-task.ts';
import { mailOnce, recipientOrOwner } from '../email/index.ts';
import { tokenUsage } from './billing.ts';

export const billingTask: TaskDefinition = {
  mails_report: true,
  /** metadata.period YYYY-MM (default this month), to metadata.recipient or the owner's email */
  async run(task) {
    const period = typeof task.metadata.period === 'string' ? task.metadata.period : undefined;
    if (period !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(period))
      throw new PlatformError('invalid', 'metadata.period: must be YYYY-MM');
    const usage = await tokenUsage(task.organization_id, task.user_id, period);
    const recipient = await recipientOrOwner(task);
    const byAgent =
      Object.entries(usage.usage_by_agent)
        .map(([a, n]) => `${a}: ${n}`)
        .join('\n') || 'No model calls.';
    const body = `Tokens used in ${usage.period}: ${usage.total_tokens}. Remaining now: ${usage.remaining_tokens}.\n\n${byAgent}`;
    const sent = await mailOnce(task, { recipient, metadata: { subject: `Token usage ${usage.period}`, body } });
    return {
      period: usage.period,
      total_tokens: usage.total_tokens,
      remaining_tokens: usage.remaining_tokens,
      ...sent,
    };
  },
};
