/**
 * Scans waiting for validation: receipt lines read with too little confidence wait for an admin,
 * who approves or rejects each; once none is pending, the scan credits its points once.
 */
import { useEffect, useState } from 'preact/hooks';

import { api, blobUrl, ok } from '../api.ts';
import {
  Badge,
  Confirm,
  ErrorMessage,
  Field,
  Loading,
  Notice,
  num,
  Pager,
  Section,
  Table,
  useAction,
  useLoad,
  when,
} from '../ui.tsx';

const LIMIT = 20;

/** The scan's extra fields the schema leaves open (receipt lines, flags), read defensively. */
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

export function ScansQueue({ id }: { id?: string }) {
  const [page, setPage] = useState(1);
  const [notice, setNotice] = useState<string>();
  const list = useLoad(
    () =>
      ok(
        api().GET('/api/ticket-scan/loyalty/ticket-scan', {
          params: { query: { status: 'pending_validation', page, limit: LIMIT } },
        }),
      ),
    [page, id],
  );
  return (
    <>
      {notice ? <Notice>{notice}</Notice> : null}
      {id ? (
        <ValidateScan
          key={id}
          id={id}
          onDone={(text) => {
            setNotice(text);
            location.hash = '#/reviews/scans';
          }}
        />
      ) : null}
      <Section title="Scans waiting for validation">
        <Loading load={list} />
        {list.data ? (
          <>
            <Table
              caption="Scans waiting for validation, newest first"
              rowKey={(s) => s.id}
              rows={list.data.scans}
              empty="No scan waits for validation."
              columns={[
                {
                  label: 'Member',
                  cell: (s) => <a href={`#/members/${encodeURIComponent(s.user_id)}`}>{s.user_id}</a>,
                },
                { label: 'When', cell: (s) => when(typeof s.created_at === 'string' ? s.created_at : null) },
                {
                  label: 'Lines to confirm',
                  num: true,
                  cell: (s) => num(s.products.filter((p) => p.validation_status === 'pending').length),
                },
                { label: 'Points', num: true, cell: (s) => num(s.total_points) },
                {
                  label: 'Action',
                  cell: (s) => (
                    <a
                      href={`#/reviews/scans/${encodeURIComponent(s.id)}`}
                      aria-label={`Validate the scan ${s.id} of ${s.user_id}`}
                    >
                      Validate…
                    </a>
                  ),
                },
              ]}
            />
            <Pager page={page} limit={LIMIT} total={list.data.total} onPage={setPage} label="Scans to validate" />
          </>
        ) : null}
      </Section>
    </>
  );
}

/** The receipt's thumbnail, fetched with the key (an <img src> cannot carry it). */
function Thumbnail({ id, alt }: { id: string; alt: string }) {
  const [src, setSrc] = useState<string>();
  const [error, setError] = useState<Error>();
  useEffect(() => {
    let url: string | undefined;
    let live = true;
    blobUrl(`/api/ticket-scan/loyalty/ticket-scan/${encodeURIComponent(id)}/thumbnail`).then(
      (u) => (live ? setSrc((url = u)) : URL.revokeObjectURL(u)),
      (e: Error) => live && setError(e),
    );
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [id]);
  if (error) return <ErrorMessage error={error} />;
  return src ? <img class="thumb" src={src} alt={alt} /> : <p aria-busy="true">Loading the receipt…</p>;
}

function ValidateScan({ id, onDone }: { id: string; onDone: (notice: string) => void }) {
  const one = useLoad(
    () => ok(api().GET('/api/ticket-scan/loyalty/ticket-scan/{ticket_id}', { params: { path: { ticket_id: id } } })),
    [id],
  );
  // Each pending line's decision: approved unless the admin says otherwise.
  const [rejected, setRejected] = useState<Set<string>>(new Set());
  const [notes, setNotes] = useState('');
  const [asking, setAsking] = useState(false);
  const scan = one.data;
  const pending = scan?.products.filter((p) => p.validation_status === 'pending') ?? [];
  const validate = useAction(async () => {
    const done = await ok(
      api().POST('/api/ticket-scan/loyalty/ticket-scan/{ticket_id}/validate', {
        params: { path: { ticket_id: id } },
        body: {
          validations: pending.map((p) => ({
            product_id: p.id,
            is_valid: !rejected.has(p.id),
            ...(notes.trim() ? { notes: notes.trim() } : {}),
          })),
        },
      }),
    );
    onDone(
      done.status === 'completed'
        ? `Scan validated: ${num(done.total_points)} points credited to ${done.user_id}.`
        : `Decisions saved: the scan is ${done.status}.`,
    );
  });
  if (!scan) return <Section title="Validate a scan">{<Loading load={one} />}</Section>;
  const approved = scan.products.filter(
    (p) =>
      p.validation_status === 'auto_approved' ||
      p.validation_status === 'approved' ||
      (p.validation_status === 'pending' && !rejected.has(p.id)),
  );
  const sum = approved.reduce((a, p) => a + p.points, 0);
  const credit = scan.max_points_per_scan != null ? Math.min(sum, scan.max_points_per_scan) : sum;
  const flags = strings(scan.flags);
  const unmatched = strings(scan.unmatched_lines);
  const taken = typeof scan.created_at === 'string' ? scan.created_at : null;
  return (
    <Section title={`Validate the scan of ${scan.user_id}`}>
      <div class="split review-item">
        <Thumbnail id={scan.id} alt={`Receipt of ${scan.user_id}${taken ? ` scanned ${when(taken)}` : ''}`} />
        <div>
          <dl class="facts">
            <dt>Member</dt>
            <dd>
              <a href={`#/members/${encodeURIComponent(scan.user_id)}`}>{scan.user_id}</a>
            </dd>
            <dt>Scanned</dt>
            <dd>{when(taken)}</dd>
            <dt>Venue</dt>
            <dd>{scan.venue_match?.explanation ?? scan.venue_id ?? '—'}</dd>
            <dt>Status</dt>
            <dd>
              <Badge tone={scan.status === 'pending_validation' ? 'warn' : undefined}>{scan.status}</Badge>
            </dd>
            {flags.length ? (
              <>
                <dt>Flags</dt>
                <dd>{flags.join(', ')}</dd>
              </>
            ) : null}
          </dl>
          <Table
            caption="The receipt's products"
            rowKey={(p) => p.id}
            rows={scan.products}
            columns={[
              { label: 'Product', cell: (p) => p.name },
              { label: 'Receipt line', cell: (p) => strings(p.lines).join(' / ') || '—' },
              { label: 'Confidence', num: true, cell: (p) => `${Math.round(p.confidence * 100)} %` },
              { label: 'Points', num: true, cell: (p) => num(p.points) },
              {
                label: 'Decision',
                cell: (p) =>
                  p.validation_status === 'pending' && scan.status === 'pending_validation' ? (
                    <select
                      aria-label={`Decision on ${p.name}`}
                      value={rejected.has(p.id) ? 'reject' : 'approve'}
                      onChange={(e) => {
                        const next = new Set(rejected);
                        if (e.currentTarget.value === 'reject') next.add(p.id);
                        else next.delete(p.id);
                        setRejected(next);
                      }}
                    >
                      <option value="approve">Approve</option>
                      <option value="reject">Reject</option>
                    </select>
                  ) : (
                    <Badge tone={p.validation_status === 'rejected' ? 'bad' : 'ok'}>{p.validation_status}</Badge>
                  ),
              },
            ]}
          />
          {unmatched.length ? (
            <>
              <h3>Lines matched to no product</h3>
              <ul>
                {unmatched.map((l) => (
                  <li>{l}</li>
                ))}
              </ul>
            </>
          ) : null}
          {scan.status === 'pending_validation' && pending.length ? (
            <>
              <Field label="Note on the decisions" hint="Kept with each decided line.">
                <input value={notes} maxLength={500} onInput={(e) => setNotes(e.currentTarget.value)} />
              </Field>
              <div class="actions">
                <button type="button" class="primary" disabled={validate.busy} onClick={() => setAsking(true)}>
                  Submit decisions
                </button>
                <a href="#/reviews/scans">Back to the queue</a>
              </div>
            </>
          ) : (
            <p>Nothing waits for validation on this scan.</p>
          )}
          <ErrorMessage error={validate.error} />
        </div>
      </div>
      <Confirm
        open={asking}
        title="Submit the decisions?"
        confirmLabel="Submit decisions"
        onCancel={() => setAsking(false)}
        onConfirm={() => {
          setAsking(false);
          void validate.run();
        }}
      >
        <p>
          {pending.length - pending.filter((p) => rejected.has(p.id)).length} line(s) approved and{' '}
          {pending.filter((p) => rejected.has(p.id)).length} rejected. The scan then completes and credits {num(credit)}{' '}
          points to {scan.user_id}, once.
        </p>
      </Confirm>
    </Section>
  );
}
