/**
 * What `execute_scheduled_task` does for each `type_of_event`: each component registers its task here.
 */
import { PlatformError } from '../errors';
import { awardAction, type ActorLevel } from '../loyalty/rules';
import { composeEmail, sendEmail, type EmailRequest } from '../email/email';
import { ADMIN_LEVEL, reserveSend } from '../email/policy';
import { getUser } from '../identity/users';
import type { EventType } from './models';
import { deliverWebhook } from '../engines/webhooks';
import { answerQuestion, requireConversation } from '../support/support';
import { feedbackStats } from '../feedback/feedback';
import { tokenUsage } from '../billing/billing';
import { NormalizedResponse, type NormalizedDoc } from '../responses/normalized';

export interface ScheduledTask {
  action: 'execute_scheduled_task';
  event_id: string;
  run_id: string;
  user_id: string;
  idp_id: string;
  organization_id: string;
  metadata: Record<string, unknown>;
  /** the level the event runs with (see rights.ts), checked before the task starts */
  actor_level: number;
}

type Task = (task: ScheduledTask) => Promise<Record<string, unknown>>;

/** Composes and sends once per run; a basic owner's mail counts against its hourly budget. */
async function mail(task: ScheduledTask, req: EmailRequest) {
  const content = await composeEmail(req);
  if (task.actor_level < ADMIN_LEVEL) await reserveSend({ organization_id: req.organization_id, user_id: req.user_id, idempotency_key: req.idempotency_key });
  return sendEmail({ req, content });
}

export const TASKS: Record<EventType, Task> = {
  async email(task) {
    const m = task.metadata;
    const recipient = typeof m.recipient === 'string' ? m.recipient : (await getUser(task.organization_id, task.user_id)).email;
    if (!recipient) throw new PlatformError(422, "metadata.recipient: no recipient and the user has no email");
    const req = {
      organization_id: task.organization_id,
      user_id: task.user_id,
      conversation_id: typeof m.conversation_id === 'string' ? m.conversation_id : '-',
      email_type: m.email_type === 'conversation_summary' ? ('conversation_summary' as const) : ('notification' as const),
      metadata: m,
      recipient,
      idempotency_key: `event:${task.run_id}`,
    };
    const sent = await mail(task, req);
    return { message_id: sent.message_id, recipient: sent.recipient };
  },
  async loyalty(task) {
    if (typeof task.metadata.action_type !== 'string') throw new PlatformError(422, 'metadata.action_type: required for loyalty events');
    const out = await awardAction({ organization_id: task.organization_id, user_id: task.user_id, action_type: task.metadata.action_type, operation_id: `event:${task.run_id}`, actor_level: task.actor_level as ActorLevel });
    return { points_awarded: out.points_awarded, balance: out.entry.balance_after };
  },
  /** The owner's token usage report (metadata.period YYYY-MM, default this month), emailed to metadata.recipient or the user's email. */
  async billing(task) {
    const period = typeof task.metadata.period === 'string' ? task.metadata.period : undefined;
    if (period !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(period)) throw new PlatformError(422, 'metadata.period: must be YYYY-MM');
    const usage = await tokenUsage(task.organization_id, task.user_id, period);
    const recipient = typeof task.metadata.recipient === 'string' ? task.metadata.recipient : (await getUser(task.organization_id, task.user_id)).email;
    if (!recipient) throw new PlatformError(422, 'metadata.recipient: no recipient and the user has no email');
    const byAgent = Object.entries(usage.usage_by_agent).map(([a, n]) => `${a}: ${n}`).join('\n') || 'No model calls.';
    const req = {
      organization_id: task.organization_id,
      user_id: task.user_id,
      conversation_id: '-',
      email_type: 'notification' as const,
      metadata: { subject: `Token usage ${usage.period}`, body: `Tokens used in ${usage.period}: ${usage.total_tokens}. Remaining now: ${usage.remaining_tokens}.\n\n${byAgent}` },
      recipient,
      idempotency_key: `event:${task.run_id}`,
    };
    const sent = await mail(task, req);
    return { period: usage.period, total_tokens: usage.total_tokens, remaining_tokens: usage.remaining_tokens, message_id: sent.message_id, recipient: sent.recipient };
  },
  /** Answers metadata.prompt in the owner's conversation metadata.conversation_id (a scheduled check-in). */
  async support(task) {
    const { prompt, conversation_id } = task.metadata;
    if (typeof prompt !== 'string' || !prompt.trim()) throw new PlatformError(422, 'metadata.prompt: required for support events');
    if (typeof conversation_id !== 'string') throw new PlatformError(422, 'metadata.conversation_id: required for support events');
    const { session_id } = await requireConversation(task.organization_id, task.user_id, conversation_id);
    // The run id names the turn: a retried run stores one turn, not two.
    const out = await answerQuestion({ organization_id: task.organization_id, user_id: task.user_id, conversation_id, session_id, prompt: prompt.slice(0, 4000), turn_id: `turn_event_${task.run_id}` });
    return { turn_id: out.metadata.turn_id, escalate: out.metadata.escalate, source_agent: out.metadata.source_agent, citations: out.metadata.citations.map((c) => c.article_id) };
  },
  /** The organization's feedback stats over metadata.period_days (default 7), emailed to metadata.recipient when given. */
  async feedback(task) {
    const days = Number(task.metadata.period_days ?? 7);
    if (!Number.isFinite(days) || days <= 0 || days > 3660) throw new PlatformError(422, 'metadata.period_days: must be a number of days between 1 and 3660');
    const stats = await feedbackStats({ organization_id: task.organization_id, from: new Date(Date.now() - days * 86_400_000) });
    const recipient = task.metadata.recipient;
    if (typeof recipient !== 'string') return { period_days: days, stats };
    const lines = [
      `Feedback in the last ${days} day(s): ${stats.total_feedback} (average rating ${stats.average_rating.toFixed(2)}).`,
      `Sentiment: ${Object.entries(stats.sentiment_distribution).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
      `Categories: ${Object.entries(stats.category_distribution).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`,
    ];
    const req = {
      organization_id: task.organization_id,
      user_id: task.user_id,
      conversation_id: '-',
      email_type: 'notification' as const,
      metadata: { subject: `Feedback summary: last ${days} day(s)`, body: lines.join('\n\n') },
      recipient,
      idempotency_key: `event:${task.run_id}`,
    };
    const sent = await mail(task, req);
    return { period_days: days, stats, message_id: sent.message_id, recipient: sent.recipient };
  },
  /** The owner's documents processed over metadata.period_days (default 7), per folder; emailed to metadata.recipient when given. */
  async documents(task) {
    const days = Number(task.metadata.period_days ?? 7);
    if (!Number.isFinite(days) || days <= 0 || days > 3660) throw new PlatformError(422, 'metadata.period_days: must be a number of days between 1 and 3660');
    const since = new Date(Date.now() - days * 86_400_000);
    const docs = await NormalizedResponse.find({ organization_id: task.organization_id, user_id: task.user_id, source: 'document', created_at: { $gte: since } }).lean<NormalizedDoc[]>();
    const folders: Record<string, number> = {};
    for (const d of docs) {
      const folder = (JSON.parse(d.metadata_json) as { data?: { folder_structure?: { folder_name?: string } } }).data?.folder_structure?.folder_name ?? 'Other';
      folders[folder] = (folders[folder] ?? 0) + 1;
    }
    const recipient = task.metadata.recipient;
    if (typeof recipient !== 'string') return { period_days: days, documents: docs.length, folders };
    const body = `${docs.length} document(s) processed in the last ${days} day(s).\n\n${Object.entries(folders).map(([f, n]) => `${f}: ${n}`).join('\n') || 'No documents.'}`;
    const req = {
      organization_id: task.organization_id,
      user_id: task.user_id,
      conversation_id: '-',
      email_type: 'notification' as const,
      metadata: { subject: `Your documents: last ${days} day(s)`, body },
      recipient,
      idempotency_key: `event:${task.run_id}`,
    };
    const sent = await mail(task, req);
    return { period_days: days, documents: docs.length, folders, message_id: sent.message_id, recipient: sent.recipient };
  },
  async webhook(task) {
    const { url, ...rest } = task.metadata;
    const payload = { action: task.action, event_id: task.event_id, run_id: task.run_id, user_id: task.user_id, idp_id: task.idp_id, organization_id: task.organization_id, metadata: rest };
    const out = await deliverWebhook(url, payload, task.run_id);
    return { status: out.status };
  },
};
