/**
 * A scheduled task runs with the rights of the key that created or last changed its event: a
 * basic owner cannot schedule what it could not do by hand. The rights are checked when the event
 * is saved and again at every run, because a key can stop working meanwhile: revoked, expired, or
 * rotated and past its grace (identity's one definition of a usable key).
 */
import { forbidden, PlatformError } from '../core/errors.ts';
import { checkRecipient } from '../email/index.ts';
import { ADMIN_LEVEL } from '../identity/constants.ts';
import { currentKeyLevel, getUser, whyUnusable } from '../identity/index.ts';
import type { EventType } from './constants.ts';
import { taskFor } from './registry.ts';
import type { EventDoc } from './store.ts';

/** Who saved an event: the key, its user and its level (0 basic, 1 admin, 2 system_admin). */
export interface Actor {
  key_id: string;
  user_id: string;
  level: number;
}

const ownEmail = async (organization_id: string, user_id: string) => (await getUser(organization_id, user_id)).email;

/**
 * 403 naming what is missing when an actor of `level` may not schedule this event: the task's own
 * rules (its component's `scheduled.ts`), and a mailed report's recipient.
 */
export async function checkEventRights(
  ev: { organization_id: string; user_id: string; type_of_event: EventType; metadata: Record<string, unknown> },
  level: number,
): Promise<void> {
  if (level >= ADMIN_LEVEL) return;
  const task = taskFor(ev.type_of_event);
  if (task.admin_only)
    throw forbidden(`A ${ev.type_of_event} event requires the admin permission (${task.admin_only})`);
  const m = ev.metadata;
  await task.checkRights?.(ev, level);
  if (task.mails_report && m.recipient !== undefined) {
    checkRecipient(
      level,
      typeof m.recipient === 'string' ? m.recipient : '',
      await ownEmail(ev.organization_id, ev.user_id),
    );
  }
}

const STOPPED = {
  revoked: 'was revoked',
  expired: 'has expired',
  rotated: 'was rotated and its grace has ended',
  gone: 'is gone',
} as const;

/** How the saver's key stopped working, for a refused run's message (read only on refusal). */
async function saverStopped(ev: EventDoc): Promise<string> {
  const why = ev.actor_key_id
    ? await whyUnusable(ev.organization_id, ev.actor_user_id ?? ev.user_id, ev.actor_key_id)
    : undefined;
  return STOPPED[why ?? 'revoked'];
}

/**
 * The level an event runs with now: its saver's key while that key is usable (not revoked,
 * expired or past a rotation's grace), else the highest usable key of the saver's user (a
 * rotated key's successor), never more than the level it was saved with. Events saved before the
 * saver was recorded use their owner's keys. No usable key: 403.
 */
async function currentLevel(ev: EventDoc): Promise<number> {
  const user_id = ev.actor_user_id ?? ev.user_id;
  const saved = ev.actor_level ?? Number.POSITIVE_INFINITY;
  const level = await currentKeyLevel(ev.organization_id, user_id, ev.actor_key_id);
  if (level < 0) {
    throw forbidden(
      ev.actor_key_id
        ? `The key that scheduled this event ${await saverStopped(ev)} and its user holds no usable key`
        : "The event's owner holds no usable key",
    );
  }
  return Math.min(level, saved);
}

/** The rights check of a run: the event as stored, at the level it holds now. */
export async function checkRunRights(ev: EventDoc, metadata: Record<string, unknown>): Promise<number> {
  const level = await currentLevel(ev);
  try {
    await checkEventRights(
      { organization_id: ev.organization_id, user_id: ev.user_id, type_of_event: ev.type_of_event, metadata },
      level,
    );
  } catch (err) {
    if (err instanceof PlatformError && err.kind === 'forbidden' && level < (ev.actor_level ?? level + 1)) {
      throw forbidden(
        `${err.message}; the key that scheduled this event ${await saverStopped(ev)} and its user now holds a lower level`,
      );
    }
    throw err;
  }
  return level;
}
