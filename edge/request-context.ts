/**
 * The request a piece of edge code runs for, without passing it down: the Temporal client's
 * interceptor reads it to file every workflow a request starts under its request id.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

import { randomText } from '../activities/core/ids.ts';

export interface RequestContext {
  request_id: string;
  started_at: bigint;
  /** set once the key is authenticated */
  organization_id?: string;
  /** the workflows this request started (the access log names them) */
  workflow_ids: string[];
}

const storage = new AsyncLocalStorage<RequestContext>();

// A caller's id is kept only when it is safe to echo in a header, a log line and a search query.
const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const newRequestId = () => `req_${randomText(12, 'hex')}`;

function requestIdFrom(header: string | undefined): string {
  const given = header?.trim();
  return given && VALID_ID.test(given) ? given : newRequestId();
}

export function newRequestContext(header: string | undefined): RequestContext {
  return { request_id: requestIdFrom(header), started_at: process.hrtime.bigint(), workflow_ids: [] };
}

export const runInRequest = <T>(ctx: RequestContext, fn: () => T): T => storage.run(ctx, fn);

export const currentRequest = (): RequestContext | undefined => storage.getStore();
