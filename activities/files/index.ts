/** The files component's surface: signed, expiring links to stored uploads (edge/routes/files.ts). */
export { LINK_DEFAULT_SECONDS, LINK_MAX_SECONDS, LINK_MIN_SECONDS } from './constants.ts';
export { createFileLink, openLinkedFile, rotateLinkKey } from './links.ts';
