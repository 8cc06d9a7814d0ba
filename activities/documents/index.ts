/** The documents component's surface: what the edge, the workflows and other components may use. */
export type { ProcessedDocument } from './documents.ts';
export { processStoredDocument, thumbnailStoredFile } from './documents.ts';
export { documentsTask } from './scheduled.ts';
export { documentsUserData } from './user-data.ts';
