/**
 * The dry run of an award (POST /loyalty/evaluate): what an action of a member would earn now,
 * line by line, and why the running campaigns that give nothing do not apply. Writes nothing.
 */
import { useState } from 'preact/hooks';

import type { RequestBody, ResponseBody } from '../../../src/index.ts';
import { api, ok } from '../api.ts';
import { ErrorMessage, Field, num, Section, Table, useAction } from '../ui.tsx';

type Evaluation = ResponseBody<'postLoyaltyEvaluate'>;

/** The platform's reason codes, in words. */
const WHY: Record<string, string> = {
  budget_exhausted: 'its budget is spent',
  not_running: 'not running now',
  day: 'not on this day',
  hours: 'outside its hours',
  action_type: 'another action',
  min_amount: 'amount below its minimum',
  category: 'no item of its categories',
  tier: "not the member's tier",
  country: "not the member's country",
  signed_up: 'signed up outside its dates',
  nth: "not the member's n-th award of the action",
  exclusive: 'an exclusive campaign applies instead',
  no_points: 'would give no points',
  limit_reached: "the member's limit is reached",
};

function Result({ r }: { r: Evaluation }) {
  return (
    <>
      <p class="dryrun-total" role="status">
        This award would credit <strong>{num(r.total)} points</strong>
        {r.capped ? ' (capped)' : ''}.
      </p>
      <Table
        caption="How the points are made"
        rowKey={(l) => l.key}
        rows={[
          {
            key: 'base',
            what: r.rule === 'fixed' ? `Base: fixed points of ${r.action_type}` : `Base: ${r.amount} ${r.currency}`,
            points: r.base as number | null,
            note: r.below_min_amount ? 'below the minimum amount' : '',
          },
          {
            key: 'tier',
            what: r.tier ? `Tier ${r.tier.name}` : 'No tier',
            points: null,
            note: `multiplier ${r.tier_multiplier}`,
          },
          ...r.campaigns.map((c) => ({
            key: c.campaign_id,
            what: `Campaign ${c.name} (v${c.version})`,
            points: c.points as number | null,
            note: [c.refused ? WHY[c.refused] : '', c.budget_capped ? 'capped by its budget left' : '']
              .filter(Boolean)
              .join('; '),
          })),
          { key: 'total', what: 'Total', points: r.total as number | null, note: r.capped ? 'capped' : '' },
        ]}
        columns={[
          { label: 'Line', cell: (l) => l.what },
          { label: 'Points', num: true, cell: (l) => num(l.points) },
          { label: 'Note', cell: (l) => l.note },
        ]}
      />
      <Table
        caption="Running campaigns that would not apply"
        empty="None: every running campaign applies."
        rowKey={(n) => n.campaign_id}
        rows={r.not_applied}
        columns={[
          {
            label: 'Campaign',
            cell: (n) => <a href={`#/campaigns/c/${encodeURIComponent(n.campaign_id)}`}>{n.campaign_id}</a>,
          },
          { label: 'Why', cell: (n) => WHY[n.reason] ?? n.reason },
        ]}
      />
    </>
  );
}

export function DryRun() {
  const [f, setF] = useState({ user: '', action: 'purchase', amount: '', currency: '' });
  const [result, setResult] = useState<Evaluation | undefined>();
  const set = (k: keyof typeof f) => (e: { currentTarget: { value: string } }) =>
    setF((o) => ({ ...o, [k]: e.currentTarget.value }));
  const run = useAction(async () => {
    setResult(undefined);
    const body: RequestBody<'postLoyaltyEvaluate'> = { user_id: f.user.trim(), action_type: f.action.trim() };
    if (f.amount.trim()) body.amount = f.amount.trim();
    if (f.currency.trim()) body.currency = f.currency.trim().toUpperCase();
    setResult(await ok(api().POST('/loyalty/evaluate', { body })));
  });
  return (
    <Section title="Dry run of an award">
      <p>What an action would earn a member now, without awarding anything.</p>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void run.run();
        }}
      >
        <Field label="Member" hint="user_id or idp_id">
          <input required value={f.user} onInput={set('user')} />
        </Field>
        <Field label="Action">
          <input required value={f.action} onInput={set('action')} />
        </Field>
        <Field label="Amount" hint="e.g. 12.30; for actions that earn by amount">
          <input inputMode="decimal" value={f.amount} onInput={set('amount')} />
        </Field>
        <Field label="Currency" hint="e.g. EUR">
          <input maxLength={3} value={f.currency} onInput={set('currency')} />
        </Field>
        <button type="submit" class="primary" disabled={run.busy}>
          Evaluate
        </button>
      </form>
      <ErrorMessage error={run.error} />
      {result ? <Result r={result} /> : null}
    </Section>
  );
}
