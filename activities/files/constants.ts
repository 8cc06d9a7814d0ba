/** Signed links' limits, shared with the edge (docs/components/files.md). */
export const LINK_MIN_SECONDS = 60;
export const LINK_MAX_SECONDS = 7 * 24 * 3600;
export const LINK_DEFAULT_SECONDS = 3600;
