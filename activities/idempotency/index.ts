/** The idempotency component's surface: what the edge, the workflows and other components may use. */
export { claimIdempotencyKey, purgeIdempotencyKeys, settleIdempotencyKey } from './keys.ts';
export { idempotencyUserData } from './user-data.ts';
