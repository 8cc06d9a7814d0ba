/** The images component's surface: what the edge, the workflows and other components may use. */
export type { ImageMetadata, StoredUpload } from './images.ts';
export {
  convertStoredHeic,
  discardUpload,
  processStoredImage,
  readStoredObject,
  readThumbnail,
  storeUpload,
  uploadPaths,
} from './images.ts';
export { imagesUserData } from './user-data.ts';
export { removeUploads, uploadExportName } from './user-data.ts';
