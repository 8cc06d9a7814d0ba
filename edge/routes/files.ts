/**
 * Signed, expiring links to stored uploads (docs/components/files.md): a key makes a link to a
 * file it may read, the link serves it without a key until it expires or the organization's
 * signing key is rotated.
 */
import { setResponseHeader } from 'h3';
import { z } from 'zod';

import { config } from '../../activities/core/config.ts';
import {
  createFileLink,
  LINK_DEFAULT_SECONDS,
  LINK_MAX_SECONDS,
  LINK_MIN_SECONDS,
  openLinkedFile,
  rotateLinkKey,
} from '../../activities/files/index.ts';
import { organizationFor } from '../auth.ts';
import { defineRoute, StreamedFile } from '../http.ts';
import { organizationId } from '../schemas.ts';

const tag = 'files';
const orgQuery = z.object({ organization_id: organizationId });

defineRoute({
  method: 'POST',
  paths: ['/api/files/links'],
  tag,
  summary: `A link to a stored file that needs no key, valid expires_in seconds (${LINK_MIN_SECONDS} to ${LINK_MAX_SECONDS}, default ${LINK_DEFAULT_SECONDS}); a basic key links only its own user's files, an admin key its organization's (404 otherwise, as for a file not stored)`,
  auth: 'key',
  // It stores nothing: a link is its signature.
  audit: false,
  query: orgQuery,
  body: z.object({
    path: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(500)
      .describe(
        "a stored file as an upload answered it (original_path, thumbnail_path, a conversion's path): <organization>/<user>/<originals|thumbnails|converted>/<file>",
      ),
    expires_in: z
      .number()
      .int('must be a whole number of seconds')
      .min(LINK_MIN_SECONDS)
      .max(LINK_MAX_SECONDS)
      .default(LINK_DEFAULT_SECONDS),
  }),
  response: z.object({
    success: z.literal(true),
    url: z.string().describe('GET it without a key: /files/<path>?expires=<unix seconds>&sig=<HMAC-SHA256, base64url>'),
    expires_at: z.string(),
  }),
  handler: async ({ principal, query, body }) => {
    const org = organizationFor(principal, query.organization_id);
    const link = await createFileLink(
      org,
      body.path,
      body.expires_in,
      principal.level === 0 ? principal.user_id : undefined,
    );
    return { success: true, url: `${config().publicUrl}${link.href}`, expires_at: link.expires_at };
  },
});

defineRoute({
  method: 'POST',
  paths: ['/api/files/signing-key/rotate'],
  tag,
  summary:
    "Replaces the organization's link-signing key (admin): every link made before stops working at once (403), on every edge",
  auth: 'admin',
  audit: {
    action: 'file_link_key.rotate',
    target: ({ principal, query }) => ({ type: 'organization', id: organizationFor(principal, query.organization_id) }),
  },
  query: orgQuery,
  response: z.object({ success: z.literal(true), rotated_at: z.string() }),
  handler: async ({ principal, query }) => ({
    success: true,
    ...(await rotateLinkKey(organizationFor(principal, query.organization_id))),
  }),
});

/** Every type a link may answer: images and PDFs inline, anything else as a download. */
const SERVED = [
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/gif',
  'image/heic',
  'image/heif',
  'application/pdf',
  'application/octet-stream',
];

defineRoute({
  method: 'GET',
  paths: ['/files/:organization_id/:user_id/:folder/:name'],
  tag,
  summary:
    'The file a signed link names, streamed, without a key; 403 "Link invalid or expired" for a changed path, expiry or signature, an expired link or one made before a key rotation; 404 when the file is no longer stored (an erasure)',
  auth: 'none',
  rateLimit: 'ip',
  // The link's own parts are read by the check itself: whatever is wrong with them is the same 403.
  params: z.object({ organization_id: z.string(), user_id: z.string(), folder: z.string(), name: z.string() }),
  query: z.object({
    expires: z.string().optional().describe('unix seconds, as the link gives it'),
    sig: z.string().optional().describe('as the link gives it'),
  }),
  statuses: { 403: 'The link is invalid or expired' },
  produces: SERVED.join(','),
  handler: async ({ event, params, query }) => {
    const file = await openLinkedFile(
      `${params.organization_id}/${params.user_id}/${params.folder}/${params.name}`,
      query.expires,
      query.sig,
    );
    // Only the holder's own cache, and not past the link's expiry; never run as a page on this origin.
    setResponseHeader(event, 'cache-control', `private, max-age=${file.max_age}`);
    setResponseHeader(event, 'x-content-type-options', 'nosniff');
    setResponseHeader(event, 'content-security-policy', "default-src 'none'; sandbox");
    setResponseHeader(event, 'referrer-policy', 'no-referrer');
    return new StreamedFile(file.stream, file.size, file.inline ? undefined : file.filename, file.content_type);
  },
});
