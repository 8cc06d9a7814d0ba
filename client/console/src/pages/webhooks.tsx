/**
 * Webhooks: the organization's endpoints with their queues (#/webhooks), and one endpoint's
 * deliveries and operations (#/webhooks/<id>, pages/webhooks-endpoint.tsx).
 */
import './webhooks.css';

import { api, ok } from '../api.ts';
import { Loading, type PageProps, Section, Table, useLoad, when } from '../ui.tsx';
import { EndpointPage } from './webhooks-endpoint.tsx';
import { age, answer, type Endpoint, rate, StateBadge, type Stats, statsOf } from './webhooks-parts.tsx';

interface Row {
  endpoint: Endpoint;
  /** null when its stats could not be read (the list still shows the endpoint) */
  stats: Stats | null;
}

async function endpointsWithStats(): Promise<Row[]> {
  const { endpoints } = await ok(api().GET('/api/webhooks/endpoints'));
  return Promise.all(
    endpoints.map(async (endpoint) => ({ endpoint, stats: await statsOf(endpoint.id).catch(() => null) })),
  );
}

function EndpointList() {
  const load = useLoad(endpointsWithStats, []);
  return (
    <>
      <h1>Webhooks</h1>
      <Section
        title="Endpoints"
        actions={
          <button type="button" onClick={load.reload} disabled={load.loading}>
            Refresh
          </button>
        }
      >
        <Loading load={load} />
        {load.data ? (
          <Table
            caption="Endpoints and their queues (success rate over the last 24 hours)"
            rowKey={(r) => r.endpoint.id}
            rows={load.data}
            empty="No webhook endpoint yet: they are added through the API."
            columns={[
              {
                label: 'Endpoint',
                cell: (r) => (
                  <>
                    <a href={`#/webhooks/${encodeURIComponent(r.endpoint.id)}`}>{r.endpoint.url}</a>
                    {r.endpoint.description ? <div class="muted">{r.endpoint.description}</div> : null}
                  </>
                ),
              },
              { label: 'State', cell: (r) => (r.stats ? <StateBadge state={r.stats.state} /> : '—') },
              { label: 'Backlog', num: true, cell: (r) => (r.stats ? r.stats.backlog.toLocaleString() : '—') },
              { label: 'Oldest undelivered', cell: (r) => age(r.stats?.oldest_undelivered_age_seconds) },
              { label: 'Success (24 h)', cell: (r) => (r.stats ? rate(r.stats.last_24h) : '—') },
              { label: 'Last success', cell: (r) => when(r.stats?.last_success_at) },
              {
                label: 'Last error',
                cell: (r) =>
                  r.stats?.last_error ? (
                    <>
                      {answer(r.stats.last_error.status)}
                      {r.stats.last_error.error ? `: ${r.stats.last_error.error}` : ''}
                      <div class="muted">{when(r.stats.last_error.at)}</div>
                    </>
                  ) : (
                    '—'
                  ),
              },
            ]}
          />
        ) : null}
      </Section>
    </>
  );
}

export function WebhooksPage({ route }: PageProps) {
  return route[0] ? <EndpointPage key={route[0]} id={route[0]} /> : <EndpointList />;
}
