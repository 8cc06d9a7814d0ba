/**
 * Search history (`/carina`): a catalogue search recorded per user, and the user's history,
 * newest first. Errors are `{detail}`.
 */
import { z } from 'zod';

import { forbidden, notFound } from '../../activities/core/errors.ts';
import type { Principal } from '../../activities/identity/index.ts';
import { findUserRef } from '../../activities/identity/index.ts';
import {
  clearSearchHistory,
  deleteSearchRecord,
  searchAndRecord,
  searchHistory,
} from '../../activities/search/index.ts';
import { actingUser, organizationFor } from '../auth.ts';
import { defineRoute } from '../http.ts';
import { organizationId, requiredId } from '../schemas.ts';

const tag = 'search history';
const when = z.iso.datetime({ offset: true }).or(z.iso.date());
const record = z.object({
  id: z.string(),
  idp_id: z.string(),
  organization_id: z.string(),
  query: z.string(),
  results: z.object({ search_data: z.record(z.string(), z.unknown()) }),
  created_at: z.string(),
});

defineRoute({
  method: 'POST',
  paths: ['/carina/search'],
  tag,
  summary:
    "Searches the organization's brands, products, venues and gifts and the user's texts, and records the query with its results",
  auth: 'key',
  audit: false,
  body: z.object({
    idp_id: requiredId,
    organization_id: organizationId,
    query: z.string().trim().min(1, 'must not be empty').max(200),
  }),
  response: record.extend({ success: z.literal(true) }),
  handler: async ({ principal, body }) => {
    const org = organizationFor(principal, body.organization_id);
    const user = await actingUser(principal, org, body.idp_id);
    return {
      success: true,
      ...(await searchAndRecord({
        organization_id: org,
        user_id: user.user_id,
        idp_id: user.idp_id,
        query: body.query,
      })),
    };
  },
});

const historyQuery = z.object({ idp_id: requiredId, organization_id: z.string().trim().min(1).max(100) });

/** The user whose history is read; an unknown one simply has none. */
async function historyOwner(principal: Principal, organization_id: string, idp_id: string) {
  const org = organizationFor(principal, organization_id);
  const user = await findUserRef(org, idp_id);
  if (principal.level === 0 && user && user.user_id !== principal.user_id)
    throw forbidden('A basic API key may only act for its own user');
  if (principal.level === 0 && !user && idp_id !== principal.idp_id)
    throw forbidden('A basic API key may only act for its own user');
  return { org, user };
}

defineRoute({
  method: 'GET',
  paths: ['/carina/search-results'],
  tag,
  summary: "The user's recorded searches, newest first (a bare array); from_date/to_date filter on created_at",
  auth: 'key',
  query: historyQuery.extend({ from_date: when.optional(), to_date: when.optional() }),
  response: z.array(record),
  handler: async ({ principal, query }) => {
    const { org, user } = await historyOwner(principal, query.organization_id, query.idp_id);
    if (!user) return [];
    return searchHistory({
      organization_id: org,
      user_id: user.user_id,
      from: query.from_date ? new Date(query.from_date) : undefined,
      to: query.to_date ? new Date(query.to_date) : undefined,
    });
  },
});

defineRoute({
  method: 'DELETE',
  paths: ['/carina/search-results/:search_id'],
  tag,
  summary: "Deletes one entry of the user's search history",
  auth: 'key',
  audit: { action: 'search_history.delete', target: ({ params }) => ({ type: 'search', id: params.search_id }) },
  params: z.object({ search_id: requiredId }),
  query: historyQuery,
  response: z.object({ success: z.literal(true), message: z.string() }),
  handler: async ({ principal, params, query }) => {
    const { org, user } = await historyOwner(principal, query.organization_id, query.idp_id);
    if (!user) throw notFound('Search record not found');
    await deleteSearchRecord(org, user.user_id, params.search_id);
    return { success: true, message: `Search ${params.search_id} deleted` };
  },
});

defineRoute({
  method: 'DELETE',
  paths: ['/carina/search-results'],
  tag,
  summary: "Clears the user's search history",
  auth: 'key',
  audit: { action: 'search_history.clear', target: ({ query }) => ({ type: 'user', id: query.idp_id }) },
  query: historyQuery,
  response: z.object({ success: z.literal(true), deleted: z.number() }),
  handler: async ({ principal, query }) => {
    const { org, user } = await historyOwner(principal, query.organization_id, query.idp_id);
    return { success: true, deleted: user ? await clearSearchHistory(org, user.user_id) : 0 };
  },
});
