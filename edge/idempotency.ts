/**
 * `Idempotency-Key` on the uploads that start a workflow. The key is scoped to the organization,
 * the acting user and the route; its record (activities/idempotency) holds a SHA-256 of the
 * request and the media or scan id of the run it started, so the workflow id of a retry is known
 * before anything runs: a retry while the first request runs waits for that same run, one after
 * it returns the first answer, and a crash between the two attaches to the run the crash left.
 * Without the header a route behaves as before: every request is a new run.
 */
import { createHash, webcrypto } from 'node:crypto';

import type { H3Event } from 'h3';
import { getRequestHeader, setResponseHeader } from 'h3';

import { noteReplay } from '../activities/core/audit-note.ts';
import { invalid, PlatformError } from '../activities/core/errors.ts';
import { claimIdempotencyKey, settleIdempotencyKey } from '../activities/idempotency/index.ts';
import { type StoredUpload, storeUpload, uploadPaths } from '../activities/images/index.ts';
import { runLiveOrDone } from '../workers/runs/client.ts';
import type { UploadWorkflow } from '../workers/runs/uploads.ts';
import { mapError } from './errors.ts';

const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEY_FORMAT = /^[\x20-\x7e]{1,200}$/;

/** The request's key, if any; a malformed one is 422 before anything is read or stored. */
export function idempotencyKeyOf(event: H3Event): string | undefined {
  const raw = getRequestHeader(event, IDEMPOTENCY_HEADER);
  if (raw === undefined) return undefined;
  const key = raw.trim();
  if (!KEY_FORMAT.test(key)) throw invalid(IDEMPOTENCY_HEADER, 'must be 1 to 200 printable ASCII characters');
  return key;
}

/** SHA-256 over the fields the run depends on and the file; the file's digest runs off the event loop. */
export async function requestHash(fields: Record<string, unknown>, file: Buffer): Promise<string> {
  const fileDigest = Buffer.from(await webcrypto.subtle.digest('SHA-256', file)).toString('hex');
  const ordered = Object.keys(fields)
    .sort()
    .map((k) => [k, fields[k] ?? null]);
  return createHash('sha256').update(JSON.stringify(ordered)).update('\0').update(fileDigest).digest('hex');
}

/** 4xx answers are the request's own fault and come again for the same key; others may be retried. */
const isRefusal = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

interface Once<R> {
  event: H3Event;
  /** the route's name in the key's scope (`process_image`, …) */
  route: string;
  organization_id: string;
  user_id: string;
  /** every request field the run depends on besides the file */
  fields: Record<string, unknown>;
  file: Buffer;
  /** a new media or scan id */
  newId: () => string;
  /** runs the work on `id`; `retry`: another request with the key may already have started it */
  run: (id: string, retry: boolean) => Promise<R>;
}

/** This request's answer is another request's (the first answer of its key): a replay, which the audit trail does not record. */
function replayed(event: H3Event): void {
  setResponseHeader(event, 'idempotent-replayed', 'true');
  noteReplay();
}

/**
 * Runs the upload once per key. The same key and request: the first answer (`Idempotent-Replayed:
 * true`), or the first refusal; the same key with another request: 422. A run that failed on
 * the server's side (5xx) leaves the key open: a retry runs it again on the same id (or attaches
 * to the run the failed request left), and that retry is the request that made the change: it is
 * no replay, and the audit trail records it. Of several requests that wait for one run, the one
 * whose answer settles the key is the one that made the change; the others are replays.
 */
async function once<R>(o: Once<R>): Promise<R> {
  const key = idempotencyKeyOf(o.event);
  if (key === undefined) return o.run(o.newId(), false);
  const request_sha256 = await requestHash(o.fields, o.file);
  const record = await claimIdempotencyKey({
    organization_id: o.organization_id,
    user_id: o.user_id,
    route: o.route,
    key,
    request_sha256,
    resource_id: o.newId(),
  });
  if (record.request_sha256 !== request_sha256)
    throw invalid(
      IDEMPOTENCY_HEADER,
      'was already used with another request (another file or other fields); use a new key for a new upload',
    );
  if (record.state === 'succeeded') {
    replayed(o.event);
    return record.result as R;
  }
  if (record.state === 'refused') {
    replayed(o.event);
    throw new PlatformError(record.refusal!.status, record.refusal!.detail);
  }
  let result: R;
  try {
    result = await o.run(record.resource_id, !record.created);
  } catch (err) {
    const { status, body } = mapError(err, 'detail', () => undefined, 'operator');
    // Not recording a refusal only costs a retry the same run again: the answer is not held up.
    if (isRefusal(status))
      await settleIdempotencyKey({ id: record.id, refusal: { status, detail: String(body.detail) } }).catch(
        () => undefined,
      );
    throw err;
  }
  // Unrecorded, a retry attaches to the finished run instead: still the same answer (and recorded
  // by the audit trail again: a second record of one change rather than none).
  const settled = await settleIdempotencyKey({ id: record.id, result }).catch(() => true);
  if (!settled) {
    // Another request with this key, waiting for the same run, answered first: its answer (and
    // its audit record) stand for the change.
    if (!record.created) setResponseHeader(o.event, 'idempotent-replayed', 'true');
    noteReplay();
  }
  return result;
}

/**
 * Stores the upload of the run `workflowId` works on. The object's name comes from the media id,
 * so a retry writes the same object at most, and none while the run it attaches to exists.
 */
async function uploadFor(
  workflowId: string,
  retry: boolean,
  input: Parameters<typeof storeUpload>[0],
): Promise<StoredUpload> {
  if (retry && (await runLiveOrDone(workflowId))) {
    const paths = uploadPaths(input.organization_id, input.user_id, input.media_id, input.filename);
    return {
      media_id: input.media_id,
      organization_id: input.organization_id,
      user_id: input.user_id,
      filename: paths.filename,
      original_path: paths.original_path,
    };
  }
  return storeUpload(input);
}

/** A file a route received and the run that works on it. */
export interface UploadRun<Rest, R> {
  organization_id: string;
  user_id: string;
  file: { data: Buffer; filename: string; contentType: string };
  /** a new media or scan id */
  newId: () => string;
  /** the run (workers/runs/uploads.ts) and the rest of its input */
  workflow: UploadWorkflow<Rest, R>;
  input: Rest;
}

/** An upload route that honours an Idempotency-Key. */
export interface KeyedUploadRun<Rest, R> extends UploadRun<Rest, R> {
  event: H3Event;
  /** the route's name in the key's scope (`process_image`, …) */
  route: string;
  /** every request field the run depends on besides the file */
  fields: Record<string, unknown>;
}

/** Stores the file under the run's media id (once: see `uploadFor`), then runs (or attaches to) the run. */
async function storeAndRun<Rest, R>(u: UploadRun<Rest, R>, media_id: string, retry: boolean): Promise<R> {
  const workflowId = u.workflow.workflowId(media_id);
  const upload = await uploadFor(workflowId, retry, {
    media_id,
    organization_id: u.organization_id,
    user_id: u.user_id,
    filename: u.file.filename,
    body: u.file.data,
    content_type: u.file.contentType,
  });
  return u.workflow.run(workflowId, upload, u.input);
}

/** "Store the upload, then run the workflow" for a route without an Idempotency-Key: a new run each time. */
export function runUpload<Rest, R>(u: UploadRun<Rest, R>): Promise<R> {
  return storeAndRun(u, u.newId(), false);
}

/**
 * "Store the upload once, then run the workflow", as every keyed upload route does it: once per
 * Idempotency-Key (`once`), the file stored under the run's media id, then the run.
 */
export function runOnUpload<Rest, R>(u: KeyedUploadRun<Rest, R>): Promise<R> {
  return once<R>({
    event: u.event,
    route: u.route,
    organization_id: u.organization_id,
    user_id: u.user_id,
    fields: { ...u.fields, filename: u.file.filename, content_type: u.file.contentType },
    file: u.file.data,
    newId: u.newId,
    run: (media_id, retry) => storeAndRun(u, media_id, retry),
  });
}
