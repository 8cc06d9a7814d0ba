/**
 * Handing a conversation to a person: an answer that escalates opens a handoff (one open per
 * conversation), an admin claims it, answers the user into the same conversation, and closes it.
 * docs/components/support.md#handing-a-conversation-to-a-person says why it works this way.
 */
import { createHash } from 'node:crypto';

import { conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { recordEvent } from '../events/index.ts';
import { storeNormalizedResponse } from '../responses/index.ts';
import {
  claimHandoff,
  closeHandoff,
  freeSlot,
  handoffById,
  type HandoffDoc,
  handoffOfTurn,
  type HandoffStatus,
  insertHandoff,
  pageHandoffs,
  pushReply,
  takeSlot,
} from './store.ts';

/** Why an answer escalated: a code word, never the question's text (it goes out in `support.escalated`). */
export type EscalationReason = 'no_answer' | 'model_unsure' | 'asked_for_person';

/** Replies one handoff holds; past it the admin closes it and the user asks again. */
export const MAX_HANDOFF_REPLIES = 50;

export interface HandoffView {
  handoff_id: string;
  organization_id: string;
  user_id: string;
  conversation_id: string;
  turn_id: string;
  reason: string;
  question: string;
  status: HandoffStatus;
  claimed_by: string | null;
  claimed_at: string | null;
  closed_by: string | null;
  closed_at: string | null;
  replies: Array<{ reply_id: string; response_id: string; text: string; by: string; at: string }>;
  created_at: string;
  updated_at: string;
}

const iso = (d: Date | undefined) => (d ? new Date(d).toISOString() : null);
const replyResponseId = (handoff_id: string, reply_id: string) => `support:reply:${handoff_id}:${reply_id}`;

const view = (h: HandoffDoc): HandoffView => ({
  handoff_id: h._id,
  organization_id: h.organization_id,
  user_id: h.user_id,
  conversation_id: h.conversation_id,
  turn_id: h.turn_id,
  reason: h.reason,
  question: h.question,
  status: h.status,
  claimed_by: h.claimed_by ?? null,
  claimed_at: iso(h.claimed_at),
  closed_by: h.closed_by ?? null,
  closed_at: iso(h.closed_at),
  replies: (h.replies ?? []).map((r) => ({
    reply_id: r.reply_id,
    response_id: replyResponseId(h._id, r.reply_id),
    text: r.text,
    by: r.by,
    at: new Date(r.at).toISOString(),
  })),
  created_at: new Date(h.created_at).toISOString(),
  updated_at: new Date(h.updated_at).toISOString(),
});

/** Recorded again each time the handoff is met: the key (its id) makes a repeat write nothing. */
async function announce(h: HandoffDoc): Promise<void> {
  await recordEvent({
    organization_id: h.organization_id,
    type: 'support.escalated',
    key: h._id,
    at: new Date(h.created_at),
    data: {
      handoff_id: h._id,
      conversation_id: h.conversation_id,
      user_id: h.user_id,
      reason: h.reason,
      created_at: new Date(h.created_at).toISOString(),
    },
  });
}

/**
 * Opens the conversation's handoff for an escalated turn, or answers the one already open (a
 * retried turn, a second escalation, two at once). The slot names the open handoff before the
 * handoff is written: a caller finding the slot's handoff not yet written writes it under that id
 * itself (the first write wins), so a crash between the two leaves no conversation without its
 * handoff; a slot still naming a closed handoff (a crash after the close) is freed and taken again.
 */
export async function openHandoff(input: {
  organization_id: string;
  user_id: string;
  conversation_id: string;
  session_id?: string;
  turn_id: string;
  question: string;
  reason: EscalationReason;
}): Promise<string> {
  const again = await handoffOfTurn(input.organization_id, input.turn_id);
  if (again) {
    await announce(again);
    return again._id;
  }
  const mine = newId('ho');
  for (let round = 0; round < 5; round += 1) {
    const holder = await takeSlot(input, mine);
    const held =
      (holder !== mine && (await handoffById(input.organization_id, holder))) ||
      (await insertHandoff({
        _id: holder,
        organization_id: input.organization_id,
        user_id: input.user_id,
        conversation_id: input.conversation_id,
        ...(input.session_id ? { session_id: input.session_id } : {}),
        turn_id: input.turn_id,
        reason: input.reason,
        question: input.question,
        status: 'open',
      }));
    if (held.status !== 'closed') {
      await announce(held);
      return held._id;
    }
    await freeSlot(input.organization_id, input.conversation_id, held._id);
  }
  throw conflict('The conversation is being handed over by another request; retry');
}

export async function listHandoffs(
  organization_id: string,
  status: HandoffStatus | undefined,
  page: number,
  limit: number,
) {
  const { docs, total } = await pageHandoffs(organization_id, status, page, limit);
  return { handoffs: docs.map(view), page, limit, total, has_more: page * limit < total };
}

async function existing(organization_id: string, handoff_id: string): Promise<HandoffDoc> {
  const h = await handoffById(organization_id, handoff_id);
  if (!h) throw notFound(`Handoff not found: ${handoff_id}`);
  return h;
}

/** The admin `by` claims an open handoff: of two claims at once one wins, the other is 409. Claiming one's own again answers it. */
export async function claimHandoffFor(organization_id: string, handoff_id: string, by: string): Promise<HandoffView> {
  const claimed = await claimHandoff(organization_id, handoff_id, by);
  if (claimed) return view(claimed);
  const h = await existing(organization_id, handoff_id);
  if (h.status === 'claimed' && h.claimed_by === by) return view(h);
  throw conflict(h.status === 'closed' ? 'Handoff is closed' : 'Handoff is already claimed by another admin');
}

/**
 * The claimer's reply, stored in the handoff and as a response of the user's conversation
 * (source `support_agent`), where the user reads the bot's answers. `reply_key` (the request's
 * Idempotency-Key) names the reply, so a retry adds nothing; without one each call is a reply.
 */
export async function replyToHandoff(
  organization_id: string,
  handoff_id: string,
  by: string,
  text: string,
  reply_key?: string,
): Promise<{ handoff: HandoffView; reply_id: string; response_id: string }> {
  const reply_id = reply_key
    ? `hr_${createHash('sha256').update(`${handoff_id}\u0000${reply_key}`).digest('base64url').slice(0, 22)}`
    : newId('hr');
  const pushed = await pushReply(
    organization_id,
    handoff_id,
    by,
    { reply_id, text, at: new Date() },
    MAX_HANDOFF_REPLIES,
  );
  const h = pushed ?? (await existing(organization_id, handoff_id));
  const reply = h.replies.find((r) => r.reply_id === reply_id);
  if (!reply) {
    if (h.status === 'closed') throw conflict('Handoff is closed');
    if (h.status === 'open') throw conflict('Handoff is not claimed: claim it first');
    if (h.claimed_by !== by) throw conflict('Handoff is claimed by another admin');
    throw conflict(`Handoff has its ${MAX_HANDOFF_REPLIES} replies: close it`);
  }
  // Idempotent on its id: a retry (or a crash before this write) stores it once.
  await storeNormalizedResponse({
    response_id: replyResponseId(handoff_id, reply_id),
    conversation_id: h.conversation_id,
    user_id: h.user_id,
    organization_id,
    source: 'support_agent',
    message: reply.text,
    metadata: { handoff_id, reply_id, agent: 'person' },
  });
  return { handoff: view(h), reply_id, response_id: replyResponseId(handoff_id, reply_id) };
}

/** Closes an open or claimed handoff (any admin of the organization); closing a closed one is 409. */
export async function closeHandoffFor(organization_id: string, handoff_id: string, by: string): Promise<HandoffView> {
  const closed = await closeHandoff(organization_id, handoff_id, by);
  if (!closed) {
    await existing(organization_id, handoff_id);
    throw conflict('Handoff is already closed');
  }
  await freeSlot(organization_id, closed.conversation_id, closed._id);
  return view(closed);
}
