/**
 * What an operator does to a member: award points, reverse a credit, export their data and erase
 * them. Money and erasure wait for a <Confirm> that says what will happen.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

import type { components } from '../../../src/schema.ts';
import { api, blobUrl, ok } from '../api.ts';
import {
  Badge,
  Confirm,
  ErrorMessage,
  Field,
  Loading,
  newId,
  Notice,
  num,
  Section,
  Table,
  useAction,
  useLoad,
  when,
} from '../ui.tsx';

export type Member = components['schemas']['User'];
type Entry = components['schemas']['LoyaltyEntry'];
type Export = components['schemas']['Export'];

const nameOf = (m: Member) => (m.display_name ? `${m.display_name} (${m.idp_id})` : m.idp_id);

export function AwardPoints({ member, onDone }: { member: Member; onDone: () => void }) {
  const rules = useLoad(() => ok(api().GET('/loyalty/rules')), []);
  const [action, setAction] = useState('');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  // operation_id: one per confirmation, so a second click or a retry of the same award never
  // credits twice, while the same reason may be given again another time.
  const pending = useRef<{ sig: string; id: string } | null>(null);
  const [preview, setPreview] = useState<{ points: number; action: string; operation_id: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const chosen = action || Object.keys(rules.data?.actions ?? {})[0] || '';
  const byAmount = !!rules.data?.earning[chosen];
  const body = () => ({ action_type: chosen, ...(byAmount && amount.trim() ? { amount: amount.trim() } : {}) });
  // The dry run says how many points the award would credit now (tier and campaigns included).
  const check = useAction(async () => {
    setDone(null);
    const ev = await ok(api().POST('/loyalty/evaluate', { body: { ...body(), user_id: member.user_id } }));
    // The same award asked again after a failure keeps its id: had the first landed, it is not paid twice.
    const sig = JSON.stringify([chosen, amount.trim(), reason.trim()]);
    if (pending.current?.sig !== sig) pending.current = { sig, id: newId('console') };
    setPreview({ points: ev.total, action: chosen, operation_id: pending.current.id });
  });
  const award = useAction(async (operation_id: string) => {
    setPreview(null);
    const res = await ok(
      api().POST('/loyalty/award-points/{idp_id}', {
        params: { path: { idp_id: member.idp_id } },
        body: { ...body(), note: reason.trim(), operation_id },
      }),
    );
    setDone(
      res.duplicate
        ? `This award was already made to ${nameOf(member)}: nothing was credited again.`
        : `Awarded ${num(res.points_awarded)} points to ${nameOf(member)}. Balance now ${num(res.balance)}.`,
    );
    pending.current = null;
    setReason('');
    onDone();
  });
  return (
    <Section title="Award points">
      <Loading load={rules} />
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void check.run();
        }}
      >
        <Field label="Action">
          <select value={chosen} onChange={(e) => setAction(e.currentTarget.value)}>
            {Object.entries(rules.data?.actions ?? {}).map(([name, points]) => (
              <option value={name}>
                {name} ({rules.data?.earning[name] ? 'by amount' : `${points} points`})
              </option>
            ))}
          </select>
        </Field>
        {byAmount ? (
          <Field label="Amount" hint={`In ${rules.data?.earning[chosen]?.currency}, e.g. 12.30`}>
            <input inputMode="decimal" value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
          </Field>
        ) : null}
        <Field label="Reason" hint="Kept with the award in the member's history (the member can read it).">
          <input required maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </Field>
        <div class="field">
          <button type="submit" class="primary" disabled={check.busy || award.busy || !chosen}>
            Award points…
          </button>
        </div>
      </form>
      <ErrorMessage error={check.error ?? award.error} />
      {done ? <Notice>{done}</Notice> : null}
      {preview ? (
        <Confirm
          open
          title={`Award ${num(preview.points)} points`}
          confirmLabel={`Award ${num(preview.points)} points`}
          onCancel={() => setPreview(null)}
          onConfirm={() => void award.run(preview.operation_id)}
        >
          <p>
            {nameOf(member)} will be credited {num(preview.points)} points for “{preview.action}”, with the reason “
            {reason.trim()}”.
          </p>
        </Confirm>
      ) : null}
    </Section>
  );
}

/** The Reverse button of a credit in the history, with its confirmation and reason. */
export function ReverseButton({
  member,
  entry,
  onDone,
}: {
  member: Member;
  entry: Entry;
  onDone: (message: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [negative, setNegative] = useState(false);
  const [missing, setMissing] = useState(false);
  const reverse = useAction(async () => {
    const res = await ok(
      api().POST('/loyalty/reverse', {
        body: {
          operation_id: entry.operation_id,
          user_id: member.user_id,
          reason: reason.trim(),
          allow_negative: negative,
        },
      }),
    );
    onDone(
      res.duplicate
        ? `This credit was already reversed: nothing more was taken back.`
        : `Took back ${num(res.points_reversed)} points from ${nameOf(member)}. Balance now ${num(res.points)}.`,
    );
  });
  return (
    <>
      <button
        type="button"
        aria-label={`Reverse ${entry.amount} points of ${entry.operation_id}`}
        disabled={reverse.busy}
        onClick={() => (reverse.clear(), setMissing(false), setOpen(true))}
      >
        Reverse
      </button>
      <ErrorMessage error={reverse.error} />
      {open ? (
        <Confirm
          open
          danger
          title={`Reverse ${num(entry.amount)} points`}
          confirmLabel={`Take back ${num(entry.amount)} points`}
          onCancel={() => setOpen(false)}
          onConfirm={() => {
            if (!reason.trim()) return setMissing(true);
            setOpen(false);
            void reverse.run();
          }}
        >
          <p>
            Takes back the {num(entry.amount)} points {nameOf(member)} got on {when(entry.created_at)} for “
            {entry.description ?? entry.reason}” (<code>{entry.operation_id}</code>).
          </p>
          <Field label="Reason for the reversal">
            <textarea required maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          </Field>
          <label class="check">
            <input type="checkbox" checked={negative} onChange={(e) => setNegative(e.currentTarget.checked)} />
            Reverse even if the points are already spent (the balance may go below zero)
          </label>
          {missing ? (
            <p class="error" role="alert">
              Say why the points are taken back.
            </p>
          ) : null}
        </Confirm>
      ) : null}
    </>
  );
}

export function ExportData({ member }: { member: Member }) {
  const [exp, setExp] = useState<Export | null>(null);
  const [href, setHref] = useState<string | null>(null);
  const start = useAction(async () => {
    setHref(null);
    const res = await ok(
      api().POST('/api/users/{user_ref}/export', { params: { path: { user_ref: member.user_id } } }),
    );
    setExp(res.export);
  });
  const poll = useAction(async (id: string) => {
    const res = await ok(
      api().GET('/api/users/{user_ref}/exports/{export_id}', {
        params: { path: { user_ref: member.user_id, export_id: id } },
      }),
    );
    setExp(res.export);
  });
  const fetchZip = useAction(async (id: string) =>
    setHref(
      await blobUrl(`/api/users/${encodeURIComponent(member.user_id)}/exports/${encodeURIComponent(id)}/download`),
    ),
  );
  // While the export is gathered, its status is read again every 2 seconds; once ready, the zip is fetched.
  useEffect(() => {
    if (!exp) return;
    if (exp.status === 'ready' && !href) void fetchZip.run(exp.export_id);
    if (exp.status !== 'processing') return;
    const timer = setTimeout(() => void poll.run(exp.export_id), 2000);
    return () => clearTimeout(timer);
  }, [exp]);
  useEffect(() => () => void (href && URL.revokeObjectURL(href)), [href]);
  return (
    <div class="member-export">
      <h3>Export</h3>
      <p>Gathers everything the platform holds about the member into a zip they may be given.</p>
      <button type="button" disabled={start.busy || exp?.status === 'processing'} onClick={() => void start.run()}>
        Export the member's data
      </button>
      <ErrorMessage error={start.error ?? poll.error ?? fetchZip.error} />
      {exp ? (
        <p role="status">
          Export <code>{exp.export_id}</code>:{' '}
          <Badge tone={exp.status === 'ready' ? 'ok' : exp.status === 'processing' ? 'warn' : 'bad'}>
            {exp.status}
          </Badge>
          {exp.error ? ` ${exp.error}` : ''}
          {exp.expires_at ? ` (available until ${when(exp.expires_at)})` : ''}
        </p>
      ) : null}
      {exp && href ? (
        <p>
          <a href={href} download={`${member.user_id}-${exp.export_id}.zip`}>
            Download the export{exp.bytes != null ? ` (${num(exp.bytes)} bytes)` : ''}
          </a>
        </p>
      ) : null}
    </div>
  );
}

export function EraseMember({ member, onErased }: { member: Member; onErased: () => void }) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [reason, setReason] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const erase = useAction(async () => {
    await ok(
      api().DELETE('/api/users/{user_ref}', {
        params: { path: { user_ref: member.user_id } },
        body: reason.trim() ? { reason: reason.trim() } : {},
      }),
    );
    onErased();
  });
  return (
    <div class="member-erase">
      <h3>Erasure</h3>
      <p>Deletes the member's personal data for good, at their request.</p>
      <button
        type="button"
        class="danger"
        disabled={erase.busy}
        onClick={() => (setTyped(''), setMismatch(false), setOpen(true))}
      >
        Erase this member…
      </button>
      <ErrorMessage error={erase.error} />
      {open ? (
        <Confirm
          open
          danger
          title={`Erase ${nameOf(member)}?`}
          confirmLabel="Erase the member"
          onCancel={() => setOpen(false)}
          onConfirm={() => {
            if (typed.trim() !== member.idp_id) return setMismatch(true);
            setOpen(false);
            void erase.run();
          }}
        >
          <p>
            <strong>This deletes the person's data and cannot be undone.</strong> Their keys are revoked at once and
            they disappear from every page. Their profile, sessions and conversations, files and photos, scans,
            documents, search history, mail and tier standing are deleted.
          </p>
          <p>
            The organization's books are kept under an anonymous tombstone: points ledger, redemptions and payments.
            Their idp_id may join again as a new member, with nothing of the old account.
          </p>
          <Field label={`Type the member's idp_id (${member.idp_id}) to confirm`}>
            <input autocomplete="off" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
          </Field>
          <Field label="Reason (optional)" hint="Shown while the erasure runs, removed when it completes.">
            <textarea maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          </Field>
          {mismatch ? (
            <p class="error" role="alert">
              The idp_id typed is not this member's: nothing was erased.
            </p>
          ) : null}
        </Confirm>
      ) : null}
    </div>
  );
}

/** An erasure under way or done: its steps, read again every 2 seconds until it completes. */
export function ErasureStatus({ userId }: { userId: string }) {
  const [tick, setTick] = useState(0);
  const load = useLoad(
    () => ok(api().GET('/api/users/{user_ref}/erasure', { params: { path: { user_ref: userId } } })),
    [userId, tick],
  );
  const e = load.data?.erasure;
  useEffect(() => {
    if (e?.status === 'completed' || load.error) return;
    const timer = setTimeout(() => setTick((t) => t + 1), 2000);
    return () => clearTimeout(timer);
  }, [e?.status, load.error, load.data]);
  return (
    <Section title="Erasure">
      <Loading load={load} />
      {e ? (
        <>
          <p role="status">
            {e.status === 'completed'
              ? `The member was erased on ${when(e.completed_at)}.`
              : 'The member is being erased: they are already gone for every reader and their keys are refused.'}
          </p>
          <dl class="facts">
            <dt>Erasure</dt>
            <dd>
              <code>{e.erasure_id}</code>
            </dd>
            <dt>Started</dt>
            <dd>{when(e.created_at)}</dd>
            <dt>Reason</dt>
            <dd>{e.reason ?? '—'}</dd>
          </dl>
          <Table
            caption="What each component did"
            rows={Object.entries(e.steps)}
            rowKey={([name]) => name}
            columns={[
              { label: 'Component', cell: ([name]) => name },
              {
                label: 'Status',
                cell: ([, s]) => <Badge tone={s.status === 'done' ? 'ok' : 'warn'}>{s.status}</Badge>,
              },
              {
                label: 'What it did',
                cell: ([, s]) =>
                  Object.entries(s.report)
                    .map(([k, v]) => `${k}: ${v}`)
                    .join(', ') || '—',
              },
            ]}
          />
        </>
      ) : null}
    </Section>
  );
}
