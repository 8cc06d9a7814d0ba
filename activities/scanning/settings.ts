import { slice } from '../core/config.ts';

/**
 * The largest receipt image scanning decodes (docs/configuration.md): read at call time, so a changed
 * configuration applies at once.
 */
export const scanningSettings = slice(['MAX_IMAGE_MEGAPIXELS'] as const);
