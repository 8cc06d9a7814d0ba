import { slice } from '../core/config.ts';

/**
 * The largest image documents decodes (docs/configuration.md): read at call time, so a changed
 * configuration applies at once.
 */
export const documentsSettings = slice(['MAX_IMAGE_MEGAPIXELS'] as const);
