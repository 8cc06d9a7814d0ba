/**
 * Campaigns & tiers: the campaigns (by status, paged) and a new one, one campaign with its
 * lifecycle and report (#/campaigns/c/<id>), the dry run of an award and the tiers.
 */
import './campaigns.css';

import { useState } from 'preact/hooks';

import { api, ok } from '../api.ts';
import { Badge, Field, Loading, Notice, num, type PageProps, Section, Table, useLoad, when } from '../ui.tsx';
import { CampaignDetail, effectText, STATUS_TONE } from './campaigns-detail.tsx';
import { DryRun } from './campaigns-dryrun.tsx';
import { type Campaign, CampaignForm } from './campaigns-form.tsx';
import { Tiers } from './campaigns-tiers.tsx';

const STATUSES = ['draft', 'scheduled', 'active', 'paused', 'ended'] as const;
const LIMIT = 20;
const VIEWS = [
  { path: '', label: 'Campaigns' },
  { path: 'dry-run', label: 'Dry run' },
  { path: 'tiers', label: 'Tiers' },
];

const link = (c: Campaign) => `#/campaigns/c/${encodeURIComponent(c.campaign_id)}`;

function CampaignList() {
  const [status, setStatus] = useState<(typeof STATUSES)[number] | ''>('');
  const [page, setPage] = useState(1);
  const [created, setCreated] = useState<Campaign | undefined>();
  const load = useLoad(
    () =>
      ok(api().GET('/loyalty/campaigns', { params: { query: { status: status || undefined, page, limit: LIMIT } } })),
    [status, page],
  );
  const rows = load.data?.campaigns ?? [];
  return (
    <>
      <Section title="Campaigns">
        <form class="row" onSubmit={(e) => e.preventDefault()}>
          <Field label="Status">
            <select
              value={status}
              onChange={(e) => {
                setStatus(e.currentTarget.value as typeof status);
                setPage(1);
              }}
            >
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          </Field>
        </form>
        <Loading load={load} />
        {load.data ? (
          <>
            <Table
              caption={status ? `Campaigns (${status}), newest first` : 'Campaigns, newest first'}
              empty={status ? `No ${status} campaign.` : 'No campaign yet: create one below.'}
              rowKey={(c) => c.campaign_id}
              rows={rows}
              columns={[
                { label: 'Name', cell: (c) => <a href={link(c)}>{c.name}</a> },
                { label: 'Status', cell: (c) => <Badge tone={STATUS_TONE[c.status]}>{c.status}</Badge> },
                { label: 'Effect', cell: (c) => effectText(c.effect) },
                {
                  label: 'Budget left',
                  num: true,
                  cell: (c) => (c.budget === null ? 'no budget' : `${num(c.budget_left)} of ${num(c.budget)}`),
                },
                { label: 'Starts', cell: (c) => when(c.starts_at) },
                { label: 'Ends', cell: (c) => (c.ends_at ? when(c.ends_at) : '—') },
              ]}
            />
            {/* The list has no total: a full page means there may be another. */}
            <nav class="pager" aria-label="Campaigns pages">
              <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                Previous
              </button>
              <span>Page {page}</span>
              <button type="button" disabled={rows.length < LIMIT} onClick={() => setPage(page + 1)}>
                Next
              </button>
            </nav>
          </>
        ) : null}
      </Section>
      <Section title="New campaign">
        {created ? (
          <Notice>
            Campaign “{created.name}” created as a draft. <a href={link(created)}>Open it</a> to start it.
          </Notice>
        ) : null}
        <CampaignForm
          onSaved={(c) => {
            setCreated(c);
            load.reload();
          }}
        />
      </Section>
    </>
  );
}

export function CampaignsPage({ route }: PageProps) {
  const [view, id] = route;
  const current = view === 'c' ? '' : (view ?? '');
  return (
    <>
      <h1>Campaigns &amp; tiers</h1>
      <nav class="subnav" aria-label="Campaigns & tiers views">
        <ul>
          {VIEWS.map((v) => (
            <li>
              <a
                href={`#/campaigns${v.path ? `/${v.path}` : ''}`}
                aria-current={current === v.path ? 'page' : undefined}
              >
                {v.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {view === 'c' && id ? (
        <CampaignDetail key={id} id={id} />
      ) : view === 'dry-run' ? (
        <DryRun />
      ) : view === 'tiers' ? (
        <Tiers />
      ) : (
        <CampaignList />
      )}
    </>
  );
}
