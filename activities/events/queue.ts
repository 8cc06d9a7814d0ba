/**
 * Waking an endpoint's actor (`webhook-endpoint:<endpoint_id>`, workflows/webhook-endpoint.ts):
 * after a fan-out queued its deliveries, a retry by hand, the endpoint's deletion, or the sweep.
 * The component holds no Temporal client: the composition root hands the signal in.
 */
import { handedIn } from '../core/wiring.ts';
import { takeWake } from './store.ts';

/** The endpoints' actors, by the process's Temporal client (workers/root.ts hands them in). */
export interface DeliveryRuns {
  /** signals `webhook-endpoint:<endpoint_id>` to look at its queue, starting it when it is not running */
  wake(endpoint: { organization_id: string; endpoint_id: string }): Promise<void>;
}

const deliveryRuns = handedIn<DeliveryRuns>("events' delivery runs");
export const configureEvents = (c: { runs: DeliveryRuns }) => deliveryRuns.set(c.runs);

/**
 * Wakes the endpoint's actor unless it is awake (one conditional write; `always`: signal it
 * whatever the flag says, as a retry by hand does).
 */
export async function wakeEndpoint(organization_id: string, endpoint_id: string, always = false): Promise<void> {
  if ((await takeWake({ endpoint_id, organization_id })) || always)
    await deliveryRuns.get().wake({ organization_id, endpoint_id });
}
