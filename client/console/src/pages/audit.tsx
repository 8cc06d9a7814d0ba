/**
 * The audit trail: every change made with an admin key, newest first, filtered by what
 * GET /api/audit offers, and a check of the organization's hash chain (GET /api/audit/verify).
 */
import './audit.css';

import { useEffect, useState } from 'preact/hooks';

import type { components } from '../../../src/schema.ts';
import { api, ok } from '../api.ts';
import {
  Badge,
  ErrorMessage,
  Field,
  Loading,
  Notice,
  type PageProps,
  Section,
  Table,
  useAction,
  useLoad,
  when,
} from '../ui.tsx';

type AuditRecord = components['schemas']['GetAuditResponse']['records'][number];
type Verified = components['schemas']['GetAuditVerifyResponse'];

interface Filters {
  action: string;
  actor_key_id: string;
  target_id: string;
  /** datetime-local values (the browser's time zone), sent as ISO instants */
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { action: '', actor_key_id: '', target_id: '', from: '', to: '' };
const LIMIT = 25;

const BREAKS: Record<NonNullable<Verified['first_break']>['reason'], string> = {
  hash_mismatch: 'its content no longer matches its hash (the record was altered)',
  prev_hash_mismatch: 'its link to the previous record is broken (a record before it was altered and re-hashed)',
  missing: 'the record is missing (removed from the trail)',
};

const orUndefined = (s: string) => s.trim() || undefined;
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** A value of a change as short text: strings as they are, the rest as JSON. */
function shown(v: unknown): string {
  if (v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function Changes({ changes }: { changes: AuditRecord['changes'] }) {
  const fields = Object.entries(changes);
  if (fields.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="changes">
      {fields.map(([field, c]) => (
        <li key={field}>
          <code>{field}</code>: {'from' in c ? <>{shown(c.from)} → </> : null}
          {shown(c.to)}
        </li>
      ))}
    </ul>
  );
}

function Verify() {
  const [result, setResult] = useState<Verified | undefined>();
  const action = useAction(async () => {
    setResult(undefined);
    setResult(await ok(api().GET('/api/audit/verify')));
  });
  const b = result?.first_break;
  return (
    <Section
      title="Chain"
      actions={
        <button type="button" class="primary" disabled={action.busy} onClick={() => void action.run()}>
          Verify the chain
        </button>
      }
    >
      <p>Recomputes every record's hash and its link to the one before, so a record altered or removed is found.</p>
      <ErrorMessage error={action.error} />
      {result && result.ok ? (
        <Notice>
          The chain is intact: {result.records_checked} records checked (from record #{result.checked_from}).
        </Notice>
      ) : null}
      {result && !result.ok ? (
        <ErrorMessage
          error={
            new Error(
              b
                ? `The chain is broken at record #${b.seq} (${b.id}): ${BREAKS[b.reason]}. ${result.records_checked} records before it are intact.`
                : `The chain is broken (${result.records_checked} records checked).`,
            )
          }
        />
      ) : null}
    </Section>
  );
}

function FilterForm({ applied, onApply }: { applied: Filters; onApply: (f: Filters) => void }) {
  const [f, setF] = useState(applied);
  // A filter applied from the table (an action's button) shows in the form too.
  useEffect(() => setF(applied), [applied]);
  const set = (k: keyof Filters) => (e: { currentTarget: HTMLInputElement }) =>
    setF({ ...f, [k]: e.currentTarget.value });
  return (
    <form
      class="row"
      aria-label="Filter the trail"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(f);
      }}
    >
      <Field label="Action">
        <input value={f.action} onInput={set('action')} placeholder="gift.create" />
      </Field>
      <Field label="Actor key id">
        <input value={f.actor_key_id} onInput={set('actor_key_id')} />
      </Field>
      <Field label="Target id">
        <input value={f.target_id} onInput={set('target_id')} />
      </Field>
      <Field label="From">
        <input type="datetime-local" value={f.from} onInput={set('from')} />
      </Field>
      <Field label="Until (before)">
        <input type="datetime-local" value={f.to} onInput={set('to')} />
      </Field>
      <div class="actions">
        <button type="submit" class="primary">
          Filter
        </button>
        <button
          type="button"
          onClick={() => {
            setF(NO_FILTERS);
            onApply(NO_FILTERS);
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}

function Trail() {
  const [filters, setFilters] = useState(NO_FILTERS);
  const [page, setPage] = useState(1);
  const load = useLoad(
    () =>
      ok(
        api().GET('/api/audit', {
          params: {
            query: {
              action: orUndefined(filters.action),
              actor_key_id: orUndefined(filters.actor_key_id),
              target_id: orUndefined(filters.target_id),
              from: instant(filters.from),
              to: instant(filters.to),
              page,
              limit: LIMIT,
            },
          },
        }),
      ),
    [filters, page],
  );
  const data = load.data;
  const apply = (f: Filters) => {
    setFilters(f);
    setPage(1);
  };
  return (
    <Section title="Trail">
      <FilterForm applied={filters} onApply={apply} />
      <Loading load={load} />
      {data ? (
        <>
          <Table
            caption="Audit records, newest first"
            rowKey={(r) => r.id}
            rows={data.records}
            empty="No record matches."
            columns={[
              { label: 'When', cell: (r) => <time dateTime={r.at}>{when(r.at)}</time> },
              {
                label: 'Action',
                // A button (filter by it) also makes the scrolling table reachable by keyboard.
                cell: (r) => (
                  <button
                    type="button"
                    class="filter-by"
                    aria-label={`Filter by ${r.action}`}
                    onClick={() => apply({ ...NO_FILTERS, action: r.action })}
                  >
                    <code>{r.action}</code>
                  </button>
                ),
              },
              {
                label: 'Actor',
                cell: (r) => (
                  <>
                    <code>{r.actor.key_id}</code> <Badge>{r.actor.level}</Badge>
                    <br />
                    <code>{r.actor.user_id}</code>
                  </>
                ),
              },
              {
                label: 'Target',
                cell: (r) => (
                  <>
                    {r.target.type} <code>{r.target.id}</code>
                  </>
                ),
              },
              { label: 'Changes', cell: (r) => <Changes changes={r.changes} /> },
              {
                label: 'Outcome',
                cell: (r) => <Badge tone={r.outcome === 'succeeded' ? 'ok' : 'warn'}>{r.outcome}</Badge>,
              },
              { label: 'Record', num: true, cell: (r) => `#${r.seq}` },
            ]}
          />
          {/* The trail answers has_more, not a total: Previous / Next only. */}
          <nav class="pager" aria-label="Audit records pages">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span>Page {data.page}</span>
            <button type="button" disabled={!data.has_more} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </nav>
        </>
      ) : null}
    </Section>
  );
}

export function AuditPage(_props: PageProps) {
  return (
    <>
      <h1>Audit</h1>
      <Verify />
      <Trail />
    </>
  );
}
