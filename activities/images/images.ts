/**
 * Image activities. The edge stores the upload (storeUpload); the image workflow then validates
 * and thumbnails it (processStoredImage), stores the normalized response, or cleans up.
 * Object keys are derived from the media id, so a retried activity overwrites, never duplicates.
 */
import { heicToJpeg, humanSize, type ImageInfo, thumbnailOf } from '../adapters/images.ts';
import { getObject, putObject, removeObject, safeName } from '../adapters/storage.ts';
import { PlatformError } from '../core/errors.ts';
import { imagesSettings } from './settings.ts';

export interface StoredUpload {
  media_id: string;
  organization_id: string;
  user_id: string;
  filename: string;
  /** `<organization_id>/<user_id>/originals/<media_id>-<filename>` */
  original_path: string;
}

/**
 * Where an upload and what is made from it are stored. Only the original keeps the name it was
 * uploaded under (the user's own file, erased with them); thumbnails and conversions are named by
 * the media id alone, because their paths travel further (answers, stored responses, the
 * `document.processed` event, which outlives the user's data in receivers' systems).
 */
export function uploadPaths(organization_id: string, user_id: string, media_id: string, filename: string) {
  const name = safeName(filename);
  return {
    filename: name,
    original_path: `${organization_id}/${user_id}/originals/${media_id}-${name}`,
    thumbnail_path: `${organization_id}/${user_id}/thumbnails/${media_id}.jpg`,
    converted_path: `${organization_id}/${user_id}/converted/${media_id}.jpg`,
  };
}

/** Called by the edge before it starts a workflow: uploads never travel in workflow payloads. */
export async function storeUpload(input: {
  media_id: string;
  organization_id: string;
  user_id: string;
  filename: string;
  body: Buffer;
  content_type?: string;
}): Promise<StoredUpload> {
  const paths = uploadPaths(input.organization_id, input.user_id, input.media_id, input.filename);
  await putObject(paths.original_path, input.body, input.content_type || 'application/octet-stream');
  return {
    media_id: input.media_id,
    organization_id: input.organization_id,
    user_id: input.user_id,
    filename: paths.filename,
    original_path: paths.original_path,
  };
}

export interface ImageMetadata {
  dimensions: string;
  width: number;
  height: number;
  format: string;
  mime_type: string;
  size: string;
  size_bytes: number;
  orientation?: number;
}

export interface ProcessedImage {
  original_path: string;
  thumbnail_path: string;
  metadata: ImageMetadata;
  engine: ImageInfo['engine'];
}

function metadataOf(info: ImageInfo): ImageMetadata {
  return {
    dimensions: `${info.width}x${info.height}`,
    width: info.width,
    height: info.height,
    format: info.format,
    mime_type: info.mime,
    size: humanSize(info.size_bytes),
    size_bytes: info.size_bytes,
    ...(info.orientation ? { orientation: info.orientation } : {}),
  };
}

async function readUpload(upload: StoredUpload): Promise<Buffer> {
  const body = await getObject(upload.original_path);
  if (!body) throw new PlatformError('not_found', `Upload not found in storage: ${upload.original_path}`);
  return body;
}

const limits = () => ({ maxPixels: imagesSettings().MAX_IMAGE_MEGAPIXELS * 1_000_000 });

export async function processStoredImage(upload: StoredUpload): Promise<ProcessedImage> {
  const body = await readUpload(upload);
  const { info, thumbnail } = await thumbnailOf(body, limits());
  const { thumbnail_path } = uploadPaths(upload.organization_id, upload.user_id, upload.media_id, upload.filename);
  await putObject(thumbnail_path, thumbnail, 'image/jpeg');
  return { original_path: upload.original_path, thumbnail_path, metadata: metadataOf(info), engine: info.engine };
}

export async function convertStoredHeic(upload: StoredUpload): Promise<{ jpeg_path: string; metadata: ImageMetadata }> {
  const body = await readUpload(upload);
  const { info, jpeg } = await heicToJpeg(body, limits());
  const { converted_path } = uploadPaths(upload.organization_id, upload.user_id, upload.media_id, upload.filename);
  await putObject(converted_path, jpeg, 'image/jpeg');
  return {
    jpeg_path: converted_path,
    metadata: {
      ...metadataOf(info),
      size: humanSize(jpeg.length),
      size_bytes: jpeg.length,
      format: 'jpeg',
      mime_type: 'image/jpeg',
    },
  };
}

/** A rejected upload is not kept. */
export async function discardUpload(path: string): Promise<void> {
  await removeObject(path);
}

export async function readStoredObject(path: string): Promise<Buffer> {
  const body = await getObject(path);
  if (!body) throw new PlatformError('not_found', `Object not found: ${path}`);
  return body;
}

/** A stored thumbnail; the name is one path segment (checked by the caller and here). */
export async function readThumbnail(organization_id: string, user_id: string, filename: string): Promise<Buffer> {
  if (filename.includes('/') || filename.includes('..')) throw new PlatformError('not_found', 'Thumbnail not found');
  const body = await getObject(`${organization_id}/${user_id}/thumbnails/${filename}`);
  if (!body) throw new PlatformError('not_found', 'Thumbnail not found');
  return body;
}
