/** The support schemas; store.ts is the one file that reads and writes them. */
import mongoose, { Schema } from 'mongoose';

/** An article of an organization's support knowledge base. */
const articleSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    title: { type: String, required: true },
    body: { type: String, required: true },
    tags: { type: [String], default: [] },
    created_by: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
articleSchema.index({ organization_id: 1 });

/** One question and its answer in a conversation, with what it cited. */
const supportTurnSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    conversation_id: { type: String, required: true },
    session_id: { type: String },
    question: { type: String, required: true },
    answer: { type: String, required: true },
    /** JSON text: [{article_id, title, passage, score}] (any keys survive either server) */
    citations_json: { type: String, required: true },
    source_agent: { type: String, required: true },
    escalate: { type: Boolean, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: false }, versionKey: false },
);
supportTurnSchema.index({ organization_id: 1, conversation_id: 1 });
// A user's turns (their export and erasure), without reading the organization's.
supportTurnSchema.index({ organization_id: 1, user_id: 1, created_at: 1 });

/**
 * A curated question→answer pair an admin wrote: retrieval answers with it, word for word, when a
 * question matches its question well enough (retrieval.ts `matchCurated`), before any generated answer.
 */
const curatedSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    question: { type: String, required: true },
    answer: { type: String, required: true },
    created_by: { type: String, required: true },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
curatedSchema.index({ organization_id: 1, created_at: -1 });

/**
 * A conversation handed to a person (docs/components/support.md#handing-a-conversation-to-a-person):
 * open → claimed (by one admin) → closed. The replies are pushed by a conditional update on the
 * handoff's state, so a reply never lands on a closed handoff or one claimed by someone else.
 */
const handoffSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    conversation_id: { type: String, required: true },
    session_id: { type: String },
    /** the turn whose answer escalated: a retried turn finds its handoff by it */
    turn_id: { type: String, required: true },
    reason: { type: String, required: true },
    question: { type: String, required: true },
    status: { type: String, enum: ['open', 'claimed', 'closed'], required: true },
    claimed_by: { type: String },
    claimed_at: { type: Date },
    closed_by: { type: String },
    closed_at: { type: Date },
    replies: {
      type: [
        new Schema(
          {
            reply_id: { type: String, required: true },
            text: { type: String, required: true },
            by: { type: String, required: true },
            at: { type: Date, required: true },
          },
          { _id: false },
        ),
      ],
      default: [],
    },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
// The admins' list by status, newest first; all of them newest first.
handoffSchema.index({ organization_id: 1, status: 1, created_at: -1 });
handoffSchema.index({ organization_id: 1, created_at: -1 });
// A retried turn's handoff, and a user's handoffs (export, erasure).
handoffSchema.index({ organization_id: 1, turn_id: 1 });
handoffSchema.index({ organization_id: 1, user_id: 1 });

/**
 * One per conversation that ever escalated, `_id` `<organization>\u0000<conversation>`: `open` names
 * its open handoff (null: none). Taking the slot is a conditional upsert on `_id`, so two escalations
 * of one conversation at once open one handoff.
 */
const handoffSlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    open: { type: String, default: null },
  },
  { versionKey: false },
);
handoffSlotSchema.index({ organization_id: 1, user_id: 1 });

export interface CuratedDoc {
  _id: string;
  organization_id: string;
  question: string;
  answer: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}
export type HandoffStatus = 'open' | 'claimed' | 'closed';
interface HandoffReply {
  reply_id: string;
  text: string;
  by: string;
  at: Date;
}
export interface HandoffDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  conversation_id: string;
  session_id?: string;
  turn_id: string;
  reason: string;
  question: string;
  status: HandoffStatus;
  claimed_by?: string;
  claimed_at?: Date;
  closed_by?: string;
  closed_at?: Date;
  replies: HandoffReply[];
  created_at: Date;
  updated_at: Date;
}
export interface HandoffSlotDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  open: string | null;
}

export interface ArticleDoc {
  _id: string;
  organization_id: string;
  title: string;
  body: string;
  tags: string[];
  created_by: string;
  created_at: Date;
  updated_at: Date;
}
export interface SupportTurnDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  conversation_id: string;
  session_id?: string;
  question: string;
  answer: string;
  citations_json: string;
  source_agent: string;
  escalate: boolean;
  created_at: Date;
}

export const KnowledgeArticle = mongoose.model<ArticleDoc>('KnowledgeArticle', articleSchema, 'support_articles');
export const SupportTurn = mongoose.model<SupportTurnDoc>('SupportTurn', supportTurnSchema, 'support_turns');
export const CuratedAnswer = mongoose.model<CuratedDoc>('CuratedAnswer', curatedSchema, 'support_curated');
export const Handoff = mongoose.model<HandoffDoc>('Handoff', handoffSchema, 'support_handoffs');
export const HandoffSlot = mongoose.model<HandoffSlotDoc>('HandoffSlot', handoffSlotSchema, 'support_handoff_slots');
