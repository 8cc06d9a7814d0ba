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
