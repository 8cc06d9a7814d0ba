/**
 * An endpoint's deliveries (newest first, paged, by status) with each attempt, a retry by hand,
 * and a replay of the ended ones since a time.
 */
import { useState } from 'preact/hooks';

import { api, ok } from '../api.ts';
import { ErrorMessage, Field, Loading, Notice, Section, Table, useAction, useLoad, when } from '../ui.tsx';
import {
  answer,
  type Delivery,
  DELIVERY_STATUSES,
  type DeliveryStatus,
  idPath,
  localInput,
  StatusBadge,
} from './webhooks-parts.tsx';

const LIMIT = 20;

/** To the second: attempts a retry schedule makes are often seconds apart. */
const instant = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

function Attempts({ d }: { d: Delivery }) {
  if (d.attempts.length === 0) return <>none yet</>;
  return (
    <ol class="attempts">
      {d.attempts.map((a) => (
        <li>
          <span class={a.status != null && a.status < 300 ? 'ok' : 'bad'}>{answer(a.status)}</span>
          {a.error ? ` · ${a.error}` : ''} · {a.duration_ms} ms · {instant(a.at)}
        </li>
      ))}
    </ol>
  );
}

export function Deliveries({ id, version, onChanged }: { id: string; version: number; onChanged: () => void }) {
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [page, setPage] = useState(1);
  const [notice, setNotice] = useState<string>();
  const load = useLoad(
    () =>
      ok(
        api().GET('/api/webhooks/deliveries', {
          params: { query: { endpoint_id: id, status: status || undefined, page, limit: LIMIT } },
        }),
      ),
    [id, status, page, version],
  );
  const retry = useAction(async (d: Delivery) => {
    setNotice(undefined);
    await ok(api().POST('/api/webhooks/deliveries/{id}/retry', idPath(d.id)));
    setNotice(`Delivery ${d.id} (${d.event_type}) is attempted again now: its result shows below.`);
    onChanged();
  });

  return (
    <Section
      title="Deliveries"
      actions={
        <button type="button" onClick={load.reload} disabled={load.loading}>
          Refresh deliveries
        </button>
      }
    >
      <form class="row" onSubmit={(e) => e.preventDefault()}>
        <Field label="Status">
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as DeliveryStatus | '');
              setPage(1);
            }}
          >
            <option value="">all</option>
            {DELIVERY_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </Field>
      </form>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorMessage error={retry.error} />
      <Loading load={load} />
      {load.data ? (
        <>
          <Table
            caption="Deliveries to this endpoint, newest first"
            rowKey={(d) => d.id}
            rows={load.data.deliveries}
            empty={status ? `No ${status} delivery.` : 'No delivery yet.'}
            columns={[
              {
                label: 'Event',
                cell: (d) => (
                  <>
                    {d.event_type}
                    <div class="muted">
                      <code>{d.event_id}</code>
                    </div>
                  </>
                ),
              },
              {
                label: 'Status',
                cell: (d) => (
                  <>
                    <StatusBadge status={d.status} />
                    {d.final_reason ? <div class="muted">{d.final_reason}</div> : null}
                  </>
                ),
              },
              { label: 'Queued', cell: (d) => when(d.created_at) },
              { label: 'Attempts', cell: (d) => <Attempts d={d} /> },
              { label: 'Next attempt', cell: (d) => (d.next_attempt_at ? instant(d.next_attempt_at) : '—') },
              {
                label: 'Action',
                cell: (d) => (
                  <button
                    type="button"
                    aria-label={`Retry delivery ${d.id}`}
                    disabled={retry.busy}
                    onClick={() => void retry.run(d)}
                  >
                    Retry
                  </button>
                ),
              },
            ]}
          />
          <nav class="pager" aria-label="Deliveries pages">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span>Page {page}</span>
            <button type="button" disabled={!load.data.has_more} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </nav>
        </>
      ) : null}
    </Section>
  );
}

export function Replay({ id, onChanged }: { id: string; onChanged: () => void }) {
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - 3_600_000)));
  const [failedOnly, setFailedOnly] = useState(false);
  const [notice, setNotice] = useState<string>();
  const replay = useAction(async () => {
    setNotice(undefined);
    // datetime-local is the browser's local time, without a zone: Date reads it so.
    const from = new Date(since);
    if (Number.isNaN(from.getTime())) throw new Error('Pick the time to replay from.');
    const r = await ok(
      api().POST('/api/webhooks/endpoints/{id}/replay', {
        ...idPath(id),
        body: { since: from.toISOString(), failed_only: failedOnly },
      }),
    );
    const n = `${r.queued} ${r.queued === 1 ? 'delivery' : 'deliveries'} queued again`;
    if (r.next_since) {
      setSince(localInput(new Date(r.next_since)));
      setNotice(`${n}; more remain: replay again from ${when(r.next_since)} (filled in).`);
    } else setNotice(`${n}.`);
    onChanged();
  });
  return (
    <Section title="Replay">
      <p>
        Sends again the deliveries that ended (succeeded or failed) and were first queued since a time, each with its
        own webhook-id. Deliveries still queued are left as they are.
      </p>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void replay.run();
        }}
      >
        <Field label="Since (your local time)">
          <input type="datetime-local" required value={since} onInput={(e) => setSince(e.currentTarget.value)} />
        </Field>
        <Field label="Only failed deliveries">
          <input type="checkbox" checked={failedOnly} onChange={(e) => setFailedOnly(e.currentTarget.checked)} />
        </Field>
        <button type="submit" class="primary" disabled={replay.busy}>
          Replay
        </button>
      </form>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorMessage error={replay.error} />
    </Section>
  );
}
