/**
 * Builds the h3 application from the route definitions: authentication, rate limiting, parsing,
 * the handler, JSON or binary answers, and error mapping, the same way for every route.
 */
import { createApp, createRouter, eventHandler, getRequestIP, send, setResponseHeader, setResponseStatus, type H3Event } from 'h3';
import { config } from '../activities/config';
import { authenticate, requireLevel } from './auth';
import { mapError, type ErrorShape } from './errors';
import { base64Room, parseWith, paramsOf, queryOf, readForm, readJson, Reply, routes, type RouteDef } from './http';
import { RateLimiter } from './rate-limit';
import type { Principal } from '../activities/identity/api-keys';
import { invalid } from '../activities/errors';

// Route modules register themselves on import.
import './routes/system';
import './routes/docs';
import './routes/retail';
import './routes/ticket-scan';
import './routes/support';
import './routes/feedback';
import './routes/search';
import './routes/documents';
import './routes/billing';
import './routes/llm-config';
import './routes/session';
import './routes/identity';
import './routes/images';
import './routes/loyalty';
import './routes/referrals';
import './routes/gifts';
import './routes/responses';
import './routes/text';
import './routes/email';
import './routes/scheduler';

export interface EdgeOptions {
  log?: (err: unknown) => void;
}

function sendJson(event: H3Event, status: number, body: unknown, headers?: Record<string, string>) {
  setResponseStatus(event, status);
  setResponseHeader(event, 'content-type', 'application/json; charset=utf-8');
  for (const [k, v] of Object.entries(headers ?? {})) setResponseHeader(event, k, v);
  return send(event, JSON.stringify(body));
}

export function createEdgeApp(opts: EdgeOptions = {}) {
  const cfg = config();
  const log = opts.log ?? ((err: unknown) => process.stderr.write(`edge: ${(err as Error)?.stack ?? String(err)}\n`));
  const limiter = new RateLimiter(cfg.RATE_LIMIT_PER_MINUTE);

  const app = createApp({
    // Only router-level failures land here (unknown route 404, wrong method 405).
    onError: (error, event) => {
      const mapped = mapError(error.cause ?? error, 'detail', log);
      return sendJson(event, mapped.status, mapped.body, mapped.headers);
    },
  });
  const router = createRouter({ preemptive: true });

  const mount = (def: RouteDef<any, any, any, any>) => {
    const shape: ErrorShape = def.errors ?? 'detail';
    const handler = eventHandler(async (event) => {
      let principal = undefined as unknown as Principal;
      try {
        if (def.auth !== 'none') {
          principal = await authenticate(event);
          limiter.take(`key:${principal.key_id}`, principal.rate_limit_per_minute);
          if (def.auth !== 'key') requireLevel(principal, def.auth);
        } else if (def.rateLimit === 'ip') {
          limiter.take(`ip:${getRequestIP(event, { xForwardedFor: false }) ?? 'unknown'}`);
        }
        const params = parseWith(def.params, paramsOf(event), 'path');
        const query = parseWith(def.query, queryOf(event), 'query');
        let body: unknown;
        let form: unknown;
        let file;
        if (def.body) body = parseWith(def.body, await readJson(event, def.jsonUpload ? base64Room(cfg.maxUploadBytes) : undefined), 'body');
        if (def.form) {
          const parsed = await readForm(event, cfg.maxUploadBytes);
          form = parseWith(def.form.fields, parsed.fields, 'form');
          if (def.form.file && !parsed.file) throw invalid('file', 'a file upload is required');
          file = parsed.file;
        }
        const result = await def.handler({ event, principal, body, query, params, form, file });
        if (result instanceof Reply) return sendJson(event, result.status, result.body, result.headers);
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
        // Keyless routes are called by operators' systems (the payment provider), not end users.
        const audience = def.auth === 'none' || (principal && principal.level >= 1) ? 'operator' : 'end_user';
        const mapped = mapError(err, shape, log, audience);
        return sendJson(event, mapped.status, mapped.body, mapped.headers);
      }
    });
    for (const path of def.paths) router.add(path, handler, def.method.toLowerCase() as 'get');
  };

  for (const def of routes) mount(def);
  app.use(router);
  return app;
}

