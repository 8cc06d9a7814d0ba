/** The documents component's surface: what the edge, the workflows and other components may use. */
export { processStoredDocument, thumbnailStoredFile } from './documents';
export type { ProcessedDocument } from './documents';
export { documentsTask } from './scheduled';
export { documentsUserData } from './user-data';
