/**
 * Curated question→answer pairs (admin-managed): an answer given word for word when a question
 * matches its question well enough, preferred to an answer composed from the knowledge base
 * (retrieval.ts `matchCurated`). Every change moves the knowledge version, like an article's.
 */
import { conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { countCurated, type CuratedDoc, insertCurated, pageCurated, removeCurated, updateCurated } from './store.ts';
import { knowledgeChanged } from './support.ts';

/** Pairs one organization holds: every question is matched against all of them. */
export const MAX_CURATED = 1000;

export interface CuratedView {
  curated_id: string;
  organization_id: string;
  question: string;
  answer: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

const view = (c: CuratedDoc): CuratedView => ({
  curated_id: c._id,
  organization_id: c.organization_id,
  question: c.question,
  answer: c.answer,
  created_by: c.created_by,
  created_at: new Date(c.created_at).toISOString(),
  updated_at: new Date(c.updated_at).toISOString(),
});

export async function createCurated(
  organization_id: string,
  input: { question: string; answer: string },
  created_by: string,
): Promise<CuratedView> {
  // A count then an insert: two creations at once may pass the limit by one, which bounds nothing that matters.
  if ((await countCurated(organization_id)) >= MAX_CURATED)
    throw conflict(`The organization has its ${MAX_CURATED} curated answers: delete one first`);
  const doc = await insertCurated({ _id: newId('cur'), organization_id, ...input, created_by });
  await knowledgeChanged(organization_id);
  return view(doc);
}

export async function changeCurated(
  organization_id: string,
  curated_id: string,
  change: { question: string; answer: string },
): Promise<CuratedView> {
  const doc = await updateCurated(organization_id, curated_id, change);
  if (!doc) throw notFound(`Curated answer not found: ${curated_id}`);
  await knowledgeChanged(organization_id);
  return view(doc);
}

export async function deleteCurated(organization_id: string, curated_id: string): Promise<void> {
  if (!(await removeCurated(organization_id, curated_id))) throw notFound(`Curated answer not found: ${curated_id}`);
  await knowledgeChanged(organization_id);
}

export async function listCurated(organization_id: string, page: number, limit: number) {
  const { docs, total } = await pageCurated(organization_id, page, limit);
  return { curated: docs.map(view), page, limit, total, has_more: page * limit < total };
}
