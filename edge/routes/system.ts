import { z } from 'zod';
import { check, mongoHealthy, storageHealthy } from '../../activities/health';
import { defineRoute, Reply } from '../http';
import { temporalHealthy } from '../temporal';

const healthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  checks: z.object({ temporal: z.string(), mongodb: z.string(), storage: z.string() }),
});

defineRoute({
  method: 'GET',
  paths: ['/health'],
  tag: 'system',
  summary: 'Checks Temporal, MongoDB and object storage for real; 503 names what fails',
  auth: 'none',
  response: healthResponse,
  handler: async () => {
    const [temporal, mongodb, storage] = await Promise.all([check(temporalHealthy), check(mongoHealthy), check(storageHealthy)]);
    const checks = { temporal, mongodb, storage };
    const ok = Object.values(checks).every((v) => v === 'ok');
    return new Reply(ok ? 200 : 503, { status: ok ? 'ok' : 'degraded', checks });
  },
});
