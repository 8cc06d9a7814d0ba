/** The support component's scheduled task: a check-in question answered in the owner's conversation. */
import { PlatformError } from '../core/errors.ts';
import type { TaskDefinition } from '../core/scheduled-task.ts';
import { answerQuestion, requireConversation } from './support.ts';

export const supportTask: TaskDefinition = {
  /** Answers metadata.prompt in the owner's conversation metadata.conversation_id. */
  async run(task) {
    const { prompt, conversation_id } = task.metadata;
    if (typeof prompt !== 'string' || !prompt.trim())
      throw new PlatformError('invalid', 'metadata.prompt: required for support events');
    if (typeof conversation_id !== 'string')
      throw new PlatformError('invalid', 'metadata.conversation_id: required for support events');
    const { session_id } = await requireConversation(task.organization_id, task.user_id, conversation_id);
    // The run id names the turn: a retried run stores one turn, not two.
    const out = await answerQuestion({
      organization_id: task.organization_id,
      user_id: task.user_id,
      conversation_id,
      session_id,
      prompt: prompt.slice(0, 4000),
      turn_id: `turn_event_${task.run_id}`,
    });
    return {
      turn_id: out.metadata.turn_id,
      escalate: out.metadata.escalate,
      source_agent: out.metadata.source_agent,
      citations: out.metadata.citations.map((c) => c.article_id),
    };
  },
};
