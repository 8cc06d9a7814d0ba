/**
 * Builds the h3 application from the route definitions: authentication, rate limiting, parsing,
 * the handler, JSON or binary answers, and error mapping, the same way for every route.
 */
// Every route registers itself on import (routes/index.ts).
import './routes/index.ts';

import {
  createApp,
  createRouter,
  eventHandler,
  getRequestHeader,
  type H3Event,
  send,
  sendStream,
  setResponseHeader,
  setResponseStatus,
} from 'h3';

import { config } from '../activities/core/config.ts';
import { invalid } from '../activities/core/errors.ts';
import { createAccessLogger, createLogger, type Logger } from '../activities/core/logger.ts';
import type { Principal } from '../activities/identity/index.ts';
import { observeRuns } from '../workers/runs/client.ts';
import { AuditTrail } from './audit-trail.ts';
import { authenticate, requireLevel } from './auth.ts';
import { type ErrorShape, mapError } from './errors.ts';
import {
  base64Room,
  clientAddress,
  paramsOf,
  parseWith,
  queryOf,
  readForm,
  readJson,
  Reply,
  type RouteDef,
  routes,
  StreamedFile,
} from './http.ts';
import { countFailure, countStart, observeRequest } from './metrics.ts';
import { RateLimiter } from './rate-limit.ts';
import { currentRequest, newRequestContext, type RequestContext, runInRequest } from './request-context.ts';

// The runs the edge starts are counted, and filed under the request that started them.
observeRuns({ request: currentRequest, started: countStart, failed: countFailure });

export interface EdgeOptions {
  logger?: Logger;
  /** the access log's logger (default: createAccessLogger, or `logger` when that is given) */
  accessLogger?: Logger;
}

function sendJson(event: H3Event, status: number, body: unknown, headers?: Record<string, string>) {
  setResponseStatus(event, status);
  setResponseHeader(event, 'content-type', 'application/json; charset=utf-8');
  for (const [k, v] of Object.entries(headers ?? {})) setResponseHeader(event, k, v);
  return send(event, JSON.stringify(body));
}

const requestOf = (event: H3Event) => event.context.request as RequestContext;
const routeOf = (event: H3Event) => (event.context.matchedRoute as { path?: string } | undefined)?.path ?? 'unmatched';
// Probes and scrapes come every few seconds: their successful answers are logged at debug only.
const isProbe = (route: string, status: number) =>
  status < 400 && (route.startsWith('/health') || route === '/metrics');

/**
 * Every request, answered by a route or not: its id (the caller's X-Request-Id when valid) in the
 * answer's header, then one access log line and its metrics once the answer is sent (or the
 * client has gone: 499). The line never holds a key, a body or the raw URL.
 */
function beginRequest(event: H3Event, logger: Logger) {
  const ctx = newRequestContext(getRequestHeader(event, 'x-request-id'));
  event.context.request = ctx;
  setResponseHeader(event, 'x-request-id', ctx.request_id);
  const res = event.node.res;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    const seconds = Number(process.hrtime.bigint() - ctx.started_at) / 1e9;
    const route = routeOf(event);
    const status = res.writableFinished ? res.statusCode : 499;
    observeRequest(event.method, route, status, seconds);
    logger[isProbe(route, status) ? 'debug' : 'info'](
      {
        request_id: ctx.request_id,
        method: event.method,
        route,
        status,
        ms: Math.round(seconds * 10_000) / 10,
        organization_id: ctx.organization_id ?? null,
        ...(ctx.workflow_ids.length ? { workflow_ids: ctx.workflow_ids } : {}),
      },
      'request',
    );
  };
  res.once('finish', finish);
  res.once('close', finish);
}

export function createEdgeApp(opts: EdgeOptions = {}) {
  const cfg = config();
  const logger = opts.logger ?? createLogger('edge', cfg.LOG_LEVEL);
  const accessLogger = opts.accessLogger ?? (opts.logger ? logger : createAccessLogger(cfg.LOG_LEVEL));
  const logFor = (event: H3Event) => (err: unknown) =>
    logger.error({ err, request_id: requestOf(event)?.request_id, route: routeOf(event) }, 'request failed');
  const limiter = RateLimiter.forEdge(cfg.RATE_LIMIT_PER_MINUTE);

  const app = createApp({
    onRequest: (event) => beginRequest(event, accessLogger),
    // Only router-level failures land here (unknown route 404, wrong method 405).
    onError: (error, event) => {
      const mapped = mapError(error.cause ?? error, 'detail', logFor(event));
      return sendJson(event, mapped.status, mapped.body, mapped.headers);
    },
  });
  const router = createRouter({ preemptive: true });

  const mount = (def: RouteDef) => {
    const shape: ErrorShape = def.errors ?? 'detail';
    const handle = async (event: H3Event) => {
      let principal = undefined as unknown as Principal;
      let trail: AuditTrail | undefined;
      try {
        if (def.auth !== 'none') {
          principal = await authenticate(event);
          requestOf(event).organization_id = principal.organization_id;
          limiter.take(`key:${principal.key_id}`, principal.rate_limit_per_minute);
          limiter.take(`user:${principal.user_id}`, principal.user_rate_limit_per_minute ?? 0); // shared by the user's keys
          if (def.auth !== 'key') requireLevel(principal, def.auth);
        } else if (def.rateLimit === 'ip') {
          limiter.take(`ip:${clientAddress(event)}`);
        }
        const params = parseWith(def.params, paramsOf(event), 'path');
        const query = parseWith(def.query, queryOf(event), 'query');
        let body: unknown;
        let form: unknown;
        let file: Awaited<ReturnType<typeof readForm>>['file'];
        if (def.body)
          body = parseWith(
            def.body,
            await readJson(event, def.jsonUpload ? base64Room(cfg.maxUploadBytes) : undefined),
            'body',
          );
        if (def.form) {
          const parsed = await readForm(event, cfg.maxUploadBytes);
          form = parseWith(def.form.fields, parsed.fields, 'form');
          if (def.form.file && !parsed.file) throw invalid('file', 'a file upload is required');
          file = parsed.file;
        }
        // An admin's change: its intent now, its record once the handler succeeded, before the answer.
        trail = await AuditTrail.begin(
          def,
          principal,
          { params, query, body, form },
          requestOf(event).request_id,
          logger,
        );
        const call = () => def.handler({ event, principal, body, query, params, form, file });
        const result = await (trail ? trail.run(call) : call());
        await trail?.answered(event, result);
        if (result instanceof Reply) return sendJson(event, result.status, result.body, result.headers);
        if (def.produces && result instanceof StreamedFile) {
          setResponseStatus(event, def.status ?? 200);
          setResponseHeader(event, 'content-type', result.contentType ?? def.produces);
          setResponseHeader(event, 'content-length', result.size);
          if (result.filename)
            setResponseHeader(event, 'content-disposition', `attachment; filename="${result.filename}"`);
          return sendStream(event, result.stream);
        }
        if (def.produces && Buffer.isBuffer(result)) {
          setResponseStatus(event, def.status ?? 200);
          setResponseHeader(event, 'content-type', def.produces);
          setResponseHeader(event, 'content-length', result.length);
          return send(event, result);
        }
        if (typeof result === 'string') {
          setResponseStatus(event, def.status ?? 200);
          return send(event, result, def.produces ?? 'text/plain; charset=utf-8');
        }
        return sendJson(event, def.status ?? 200, result);
      } catch (err) {
        trail?.failed();
        // Keyless routes are called by operators' systems (the payment provider), not end users.
        const audience = def.auth === 'none' || (principal && principal.level >= 1) ? 'operator' : 'end_user';
        const mapped = mapError(err, shape, logFor(event), audience);
        return sendJson(event, mapped.status, mapped.body, mapped.headers);
      }
    };
    // The request's context follows the handler into every await (the Temporal client reads it).
    const handler = eventHandler((event) => runInRequest(requestOf(event), () => handle(event)));
    for (const path of def.paths) router.add(path, handler, def.method.toLowerCase() as 'get');
  };

  for (const def of routes) mount(def);
  app.use(router);
  return app;
}
