import '../../edge/app.ts';

import { describe, expect, inject, it } from 'vitest';

import { routes } from '../../edge/http.ts';
import { call } from '../helpers/api.ts';

describe('system routes', () => {
  it('reports health of Temporal, MongoDB and storage', async () => {
    const res = await call('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', checks: { temporal: 'ok', mongodb: 'ok', storage: 'ok' } });
  });

  it('reports readiness: every server and the workers polling the task queue, without a key', async () => {
    const res = await call('GET', '/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'ready',
      task_queue: inject('platformEnv').TEMPORAL_TASK_QUEUE,
      checks: { temporal: 'ok', mongodb: 'ok', storage: 'ok', workflow_pollers: 'ok', activity_pollers: 'ok' },
      missing: [],
    });
    expect(res.body.pollers.workflow).toBeGreaterThanOrEqual(1);
    expect(res.body.pollers.activity).toBeGreaterThanOrEqual(1);
  });

  it('serves an OpenAPI 3.1 document covering every route, with request schemas', async () => {
    const res = await call('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const def of routes) {
      for (const path of def.paths) {
        const openPath = path.replace(/:([A-Za-z_]+)/g, '{$1}');
        expect(res.body.paths[openPath]?.[def.method.toLowerCase()], `${def.method} ${path}`).toBeDefined();
      }
    }
    const gen = res.body.paths['/generate_api_key'].post;
    expect(gen.requestBody.content['application/json'].schema.properties.permissions.items.enum).toEqual([
      'basic',
      'admin',
      'system_admin',
    ]);
    expect(gen.requestBody.content['application/json'].schema.required).toContain('user_id');
    const img = res.body.paths['/process_image'].post.requestBody.content['multipart/form-data'].schema;
    expect(img.required).toEqual(expect.arrayContaining(['file', 'user_id', 'session_id', 'conversation_id']));
    expect(res.body.paths['/list_api_keys/{user_id}'].get.parameters[0]).toMatchObject({
      name: 'user_id',
      in: 'path',
      required: true,
    });
  });

  it('serves a docs page', async () => {
    const res = await call('GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.raw.toString()).toContain('openapi.json');
  });
});
