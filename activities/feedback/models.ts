/** The feedback schema; store.ts is the one file that reads and writes it. */
import mongoose, { Schema } from 'mongoose';

import { FEEDBACK_TYPES, type FeedbackType } from './constants.ts';

/**
 * One piece of feedback. The analysis is written once by the feedback-analysis workflow;
 * until then `analysis_status` is `pending` and stats count it as such.
 */
const feedbackSchema = new Schema(
  {
    _id: { type: String, required: true },
    organization_id: { type: String, required: true },
    user_id: { type: String, required: true },
    feedback_type: { type: String, enum: FEEDBACK_TYPES, required: true },
    rating: { type: Number, required: true },
    title: { type: String, default: '' },
    comment: { type: String, default: '' },
    /** what it judges: a support conversation of the user, and one answer of it (`support:<turn_id>`) */
    conversation_id: { type: String },
    response_id: { type: String },
    analysis_status: { type: String, enum: ['pending', 'done'], required: true },
    sentiment_score: { type: Number },
    sentiment_label: { type: String },
    /** JSON text: [{category, polarity}] */
    categories_json: { type: String },
    analysis_engine: { type: String },
    analysed_at: { type: Date },
  },
  { timestamps: { createdAt: 'created_at', updatedAt: 'updated_at' }, versionKey: false },
);
feedbackSchema.index({ organization_id: 1, created_at: -1 });
// A user's feedback (their export and erasure), without reading the organization's.
feedbackSchema.index({ organization_id: 1, user_id: 1, created_at: 1 });

export interface FeedbackDoc {
  _id: string;
  organization_id: string;
  user_id: string;
  feedback_type: FeedbackType;
  rating: number;
  title: string;
  comment: string;
  conversation_id?: string;
  response_id?: string;
  analysis_status: 'pending' | 'done';
  sentiment_score?: number;
  sentiment_label?: string;
  categories_json?: string;
  analysis_engine?: string;
  analysed_at?: Date;
  created_at: Date;
  updated_at: Date;
}

export const Feedback = mongoose.model<FeedbackDoc>('Feedback', feedbackSchema, 'feedback');
