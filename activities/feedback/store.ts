/**
 * The feedback store: the one file that reads and writes `feedback`. A piece of feedback is read
 * and analysed by `_id`; statistics read the organization's feedback on the
 * (organization_id, created_at) index.
 */
import { byId, jsonText } from '../core/db/index.ts';
import { Feedback, type FeedbackDoc } from './models.ts';

export type { FeedbackDoc };

export interface FeedbackCategory {
  category: string;
  polarity: 'praise' | 'complaint' | 'neutral';
}

const categoriesText = jsonText<FeedbackCategory[]>(() => []);

export async function insertFeedback(
  doc: Pick<
    FeedbackDoc,
    | '_id'
    | 'organization_id'
    | 'user_id'
    | 'feedback_type'
    | 'rating'
    | 'title'
    | 'comment'
    | 'conversation_id'
    | 'response_id'
  >,
): Promise<void> {
  await Feedback.create({ ...doc, analysis_status: 'pending' });
}

export async function removeFeedback(feedback_id: string): Promise<void> {
  await Feedback.deleteOne({ _id: feedback_id });
}

export const feedbackById = (feedback_id: string) => byId<FeedbackDoc>(Feedback, feedback_id);

/** Written once by the analysis workflow (writing it again is harmless). */
export async function writeAnalysis(
  feedback_id: string,
  a: { sentiment_score: number; sentiment_label: string; categories: FeedbackCategory[]; engine: string },
): Promise<void> {
  await Feedback.updateOne(
    { _id: feedback_id },
    {
      $set: {
        analysis_status: 'done',
        sentiment_score: a.sentiment_score,
        sentiment_label: a.sentiment_label,
        categories_json: categoriesText.encode(a.categories),
        analysis_engine: a.engine,
        analysed_at: new Date(),
      },
    },
  );
}

export type StatsRow = Pick<
  FeedbackDoc,
  | 'rating'
  | 'feedback_type'
  | 'analysis_status'
  | 'sentiment_label'
  | 'sentiment_score'
  | 'conversation_id'
  | 'response_id'
> & { categories: FeedbackCategory[] };

export async function statsRows(filter: {
  organization_id: string;
  feedback_type?: string;
  from?: Date;
  to?: Date;
}): Promise<StatsRow[]> {
  const query: Record<string, unknown> = { organization_id: filter.organization_id };
  if (filter.feedback_type) query.feedback_type = filter.feedback_type;
  if (filter.from || filter.to)
    query.created_at = { ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lt: filter.to } : {}) };
  const docs = await Feedback.find(query, {
    rating: 1,
    feedback_type: 1,
    analysis_status: 1,
    sentiment_label: 1,
    sentiment_score: 1,
    categories_json: 1,
    conversation_id: 1,
    response_id: 1,
  }).lean<FeedbackDoc[]>();
  return docs.map(({ categories_json, ...d }) => ({ ...d, categories: categoriesText.decode(categories_json) }));
}

// ---- a user's export and erasure (user-data.ts)

/**
 * The user's feedback, oldest first. `feedback` has no index on user_id: this reads the
 * organization's feedback on the `{organization_id, created_at}` prefix and filters the user's.
 */
export async function userFeedback(
  organization_id: string,
  user_id: string,
): Promise<Array<Omit<FeedbackDoc, 'categories_json'> & { categories: FeedbackCategory[] }>> {
  const docs = await Feedback.find({ organization_id, user_id }).sort({ created_at: 1 }).lean<FeedbackDoc[]>();
  return docs.map(({ categories_json, ...d }) => ({ ...d, categories: categoriesText.decode(categories_json) }));
}

/**
 * Keeps the user's feedback for the statistics without the person: user_id becomes the tombstone
 * and the free text (title, comment) is emptied; type, rating, sentiment and categories stay.
 * One updateMany on the same read as `userFeedback`: a second call finds none. How many changed.
 */
export async function anonymizeUserFeedback(
  organization_id: string,
  user_id: string,
  tombstone: string,
): Promise<number> {
  return (
    (await Feedback.updateMany({ organization_id, user_id }, { $set: { user_id: tombstone, title: '', comment: '' } }))
      .modifiedCount ?? 0
  );
}
