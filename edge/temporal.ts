/** The edge's Temporal client, connected once per process. */
import { Client, Connection } from '@temporalio/client';
import { config } from '../activities/config';

let client: Promise<Client> | undefined;

export function temporal(): Promise<Client> {
  client ??= (async () => {
    const cfg = config();
    const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS!, connectTimeout: 5000 });
    return new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
  })().catch((err) => {
    client = undefined; // next request tries again
    throw err;
  });
  return client;
}

export async function temporalHealthy(): Promise<boolean> {
  const c = await temporal();
  await c.connection.workflowService.getSystemInfo({});
  return true;
}

export async function closeTemporal(): Promise<void> {
  if (!client) return;
  const c = await client.catch(() => undefined);
  client = undefined;
  await c?.connection.close();
}

export const taskQueue = () => config().TEMPORAL_TASK_QUEUE;
