/**
 * idempotency's part of a user's export and erasure (docs/privacy.md): the user's
 * `Idempotency-Key` records (route, key, the run's resource id and its stored first answer).
 * They exist only to answer a retried upload, so all of them are deleted; nothing is kept.
 */
import type { UserData } from '../core/user-data.ts';
import { claimsOf, deleteClaims } from './store.ts';

export const idempotencyUserData: UserData = {
  async export({ organization_id, user_id }) {
    const claims = await claimsOf(organization_id, user_id);
    return {
      data: {
        // the request's SHA-256 is left out: a digest, not the user's data
        idempotency_keys: claims.map((c) => ({
          route: c.route,
          key: c.key,
          resource_id: c.resource_id,
          state: c.state,
          result: c.result,
          refusal: c.refusal_status === null ? null : { status: c.refusal_status, detail: c.refusal_detail ?? '' },
          created_at: c.created_at.toISOString(),
          updated_at: new Date(c.updated_at).toISOString(),
        })),
      },
      files: [],
    };
  },
  async erase({ organization_id, user_id }) {
    const claims = await claimsOf(organization_id, user_id);
    return { idempotency_keys_deleted: await deleteClaims(claims.map((c) => c._id)) };
  },
};
