/** The loyalty component's scheduled task: award metadata.action_type to the owner, once per run. */
import { forbidden, invalid, PlatformError } from '../core/errors.ts';
import type { TaskDefinition } from '../core/scheduled-task.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { type ActorLevel, awardAction } from './awards.ts';
import { getRules } from './rules.ts';

export const loyaltyTask: TaskDefinition = {
  checkMetadata(metadata) {
    if (typeof metadata.action_type !== 'string') throw invalid('metadata.action_type', 'required for loyalty events');
  },
  /** What a basic key could report by hand (the run is checked again by awardAction itself). */
  async checkRights(ev, level) {
    const action_type = ev.metadata.action_type;
    if (typeof action_type !== 'string' || level >= ADMIN_LEVEL) return;
    const rules = await getRules(ev.organization_id);
    const policy = Object.hasOwn(rules.policies, action_type) ? rules.policies[action_type] : undefined;
    if (policy && !policy.self_service)
      throw forbidden(
        `Action "${action_type}" needs an admin key: a basic API key may only schedule the self-service actions`,
      );
  },
  async run(task) {
    if (typeof task.metadata.action_type !== 'string')
      throw new PlatformError('invalid', 'metadata.action_type: required for loyalty events');
    const out = await awardAction({
      organization_id: task.organization_id,
      user_id: task.user_id,
      action_type: task.metadata.action_type,
      operation_id: `event:${task.run_id}`,
      actor_level: task.actor_level as ActorLevel,
    });
    return { points_awarded: out.points_awarded, balance: out.entry?.balance_after ?? out.balance };
  },
};
