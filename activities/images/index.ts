/** The images component's surface: what the edge, the workflows and other components may use. */
export { convertStoredHeic, discardUpload, processStoredImage, readStoredObject, readThumbnail, storeUpload, uploadPaths } from './images';
export type { ImageMetadata, StoredUpload } from './images';
export { imagesUserData } from './user-data';
export { removeUploads, uploadExportName } from './user-data';
