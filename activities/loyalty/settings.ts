import { slice } from '../core/config.ts';

/**
 * Where users reach the platform (referral links) (docs/configuration.md): read at call time, so a
 * changed configuration applies at once.
 */
export const loyaltySettings = slice(['publicUrl'] as const);
