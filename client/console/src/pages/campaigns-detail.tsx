/**
 * One campaign: what it is, its lifecycle (start, pause, resume, end, delete a draft), its
 * edit form and its report, with the budget burn per day of the program's calendar.
 */
import { useMemo, useState } from 'preact/hooks';

import type { ResponseBody } from '../../../src/index.ts';
import { api, ok } from '../api.ts';
import {
  Badge,
  Chart,
  Confirm,
  ErrorMessage,
  Loading,
  Notice,
  num,
  Section,
  useAction,
  useLoad,
  when,
} from '../ui.tsx';
import { type Campaign, CampaignForm } from './campaigns-form.tsx';

type Report = ResponseBody<'getLoyaltyCampaignsByCampaignIdReport'>;
type Move = 'active' | 'paused' | 'ended';

export const STATUS_TONE = { draft: undefined, scheduled: 'warn', active: 'ok', paused: 'warn', ended: 'bad' } as const;

/** The moves the platform allows from each status (activities/loyalty/campaigns.ts MOVES). */
const MOVES: Record<Campaign['status'], [Move, string][]> = {
  draft: [
    ['active', 'Start'],
    ['ended', 'End'],
  ],
  scheduled: [
    ['paused', 'Pause'],
    ['ended', 'End'],
  ],
  active: [
    ['paused', 'Pause'],
    ['ended', 'End'],
  ],
  paused: [
    ['active', 'Resume'],
    ['ended', 'End'],
  ],
  ended: [],
};
const DONE: Record<Move, string> = {
  active: 'started (or scheduled until its start)',
  paused: 'paused',
  ended: 'ended',
};

export function effectText(e: Campaign['effect']): string {
  if (e.type === 'bonus') return `+${num(e.points)} points`;
  if (e.type === 'multiplier') return `× ${e.factor}`;
  return `${e.rate} points per unit`;
}

/**
 * With a budget: the points given to date and the budget left at the end of each day, from the
 * campaign's start (all of it left then), so the lines burn down. Without: the points per day.
 */
function burn(r: Report, startsAt: string) {
  const days = [...r.per_day].sort((a, b) => a.day.localeCompare(b.day));
  // Noon UTC keeps the calendar day the same in the browser's zone for the table's dates.
  const x = days.map((d) => Date.parse(`${d.day}T12:00:00Z`) / 1000);
  const given = days.map((d) => d.points);
  if (r.budget_left === null || days.length === 0)
    return { x, series: [{ label: 'Points given (net)', values: given as (number | null)[] }] };
  const total = given.reduce((a, b) => a + b, 0);
  let sum = 0;
  const toDate = given.map((g) => (sum += g));
  const start = Math.min(Date.parse(startsAt) / 1000, x[0] - 43_200);
  return {
    x: [start, ...x],
    series: [
      { label: 'Points given to date', values: [0, ...toDate] },
      // What is left now plus what was given after each point (a budget edit moves both alike).
      { label: 'Budget left', values: [r.budget_left + total, ...toDate.map((t) => r.budget_left! + total - t)] },
    ],
  };
}

function ReportView({ report, startsAt }: { report: Report; startsAt: string }) {
  const chart = useMemo(() => burn(report, startsAt), [report, startsAt]);
  return (
    <>
      <dl class="facts">
        <dt>Points given</dt>
        <dd>{num(report.points_given)}</dd>
        <dt>Points given back</dt>
        <dd>{num(report.points_returned)}</dd>
        <dt>Awards</dt>
        <dd>{num(report.awards)}</dd>
        <dt>Members reached</dt>
        <dd>{num(report.members_reached)}</dd>
        <dt>Budget</dt>
        <dd>{report.budget === null ? 'none' : num(report.budget)}</dd>
        <dt>Budget left</dt>
        <dd>{report.budget_left === null ? '—' : num(report.budget_left)}</dd>
      </dl>
      <Chart
        title={report.budget === null ? 'Points given per day' : 'Budget burn'}
        x={chart.x}
        xLabel="Day"
        series={chart.series}
        bars={report.budget === null}
      />
    </>
  );
}

export function CampaignDetail({ id }: { id: string }) {
  const path = { campaign_id: id };
  const load = useLoad(
    () =>
      Promise.all([
        ok(api().GET('/loyalty/campaigns/{campaign_id}', { params: { path } })),
        ok(api().GET('/loyalty/campaigns/{campaign_id}/report', { params: { path } })),
      ]),
    [id],
  );
  const [notice, setNotice] = useState('');
  const [confirm, setConfirm] = useState<'ended' | 'delete' | null>(null);
  const [edits, setEdits] = useState(0);
  const move = useAction(async (status: Move) => {
    setConfirm(null);
    setNotice('');
    await ok(api().PATCH('/loyalty/campaigns/{campaign_id}', { params: { path }, body: { status } }));
    setNotice(`Campaign ${DONE[status]}.`);
    load.reload();
  });
  const remove = useAction(async () => {
    setConfirm(null);
    await ok(api().DELETE('/loyalty/campaigns/{campaign_id}', { params: { path } }));
    location.hash = '#/campaigns';
  });
  if (!load.data) return <Loading load={load} />;
  const [c, report] = load.data;
  return (
    <>
      <p>
        <a href="#/campaigns">← All campaigns</a>
      </p>
      <Section title={`Campaign: ${c.name}`}>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <Badge tone={STATUS_TONE[c.status]}>{c.status}</Badge>
          </dd>
          <dt>Effect</dt>
          <dd>{effectText(c.effect)}</dd>
          <dt>Runs</dt>
          <dd>
            from {when(c.starts_at)}
            {c.ends_at ? ` to ${when(c.ends_at)}` : ', until ended'}
          </dd>
          <dt>Action types</dt>
          <dd>{c.conditions.action_types.join(', ') || 'every action'}</dd>
          <dt>Version</dt>
          <dd>{c.version}</dd>
          <dt>Id</dt>
          <dd>
            <code>{c.campaign_id}</code>
          </dd>
          {c.description ? (
            <>
              <dt>Description</dt>
              <dd>{c.description}</dd>
            </>
          ) : null}
        </dl>
        <div class="actions lifecycle">
          {MOVES[c.status].map(([to, label]) => (
            <button
              type="button"
              class={to === 'ended' ? 'danger' : undefined}
              disabled={move.busy}
              onClick={() => (to === 'ended' ? setConfirm('ended') : void move.run(to))}
            >
              {label}
            </button>
          ))}
          {c.status === 'draft' ? (
            <button type="button" onClick={() => setConfirm('delete')}>
              Delete draft
            </button>
          ) : null}
        </div>
        {notice ? <Notice>{notice}</Notice> : null}
        <ErrorMessage error={move.error ?? remove.error} />
      </Section>
      <Section title="Report">
        <ReportView report={report} startsAt={c.starts_at} />
      </Section>
      {c.status === 'ended' ? null : (
        <Section title="Edit">
          {c.status === 'draft' ? null : <p>An edit of a started campaign makes a new version; awards name theirs.</p>}
          <CampaignForm
            key={`${c.version}-${edits}`}
            campaign={c}
            onSaved={() => {
              setNotice('Changes saved.');
              setEdits((n) => n + 1);
              load.reload();
            }}
          />
        </Section>
      )}
      {/* One dialog for both: ui.tsx's Confirm names its title by a fixed id. */}
      <Confirm
        open={confirm !== null}
        title={confirm === 'delete' ? 'Delete this draft?' : 'End this campaign?'}
        confirmLabel={confirm === 'delete' ? 'Delete draft' : 'End campaign'}
        danger
        onConfirm={() => void (confirm === 'delete' ? remove.run() : move.run('ended'))}
        onCancel={() => setConfirm(null)}
      >
        <p>
          {confirm === 'delete'
            ? `The draft “${c.name}” is deleted for good. It has given no points.`
            : `“${c.name}” stops giving points now. An ended campaign cannot be restarted or edited; its awards keep naming it.`}
        </p>
      </Confirm>
    </>
  );
}
