/**
 * The organization's tiers and their qualifying window (GET/PUT /loyalty/tiers): the whole set is
 * replaced at once, as the API does; each tier is a small fieldset so it reads on a phone.
 */
import { useState } from 'preact/hooks';

import type { RequestBody, ResponseBody } from '../../../src/index.ts';
import { api, ok } from '../api.ts';
import { ErrorMessage, Field, Loading, Notice, num, Section, Table, useAction, useLoad, when } from '../ui.tsx';

type Program = ResponseBody<'getLoyaltyTiers'>;
type Body = RequestBody<'putLoyaltyTiers'>;
interface Row {
  key: number;
  tier_id: string;
  name: string;
  threshold: string;
  multiplier: string;
  unlocks: string;
}
interface Draft {
  rows: Row[];
  window: 'calendar_year' | 'rolling_months';
  months: string;
  grace: string;
}

const MAX_TIERS = 10;
let keys = 0;

function draftOf(p: Program): Draft {
  return {
    rows: p.tiers.map((t) => ({
      key: ++keys,
      tier_id: t.tier_id,
      name: t.name,
      threshold: String(t.threshold),
      multiplier: t.multiplier,
      unlocks: t.unlocks.join(', '),
    })),
    window: p.window.type,
    months: p.window.type === 'rolling_months' ? String(p.window.months) : '12',
    grace: String(p.grace_days),
  };
}

function bodyOf(d: Draft): Body {
  return {
    tiers: d.rows.map((r) => ({
      tier_id: r.tier_id.trim(),
      name: r.name,
      threshold: Number(r.threshold),
      multiplier: r.multiplier.trim() || '1',
      unlocks: r.unlocks
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean),
    })),
    window:
      d.window === 'calendar_year' ? { type: 'calendar_year' } : { type: 'rolling_months', months: Number(d.months) },
    grace_days: Number(d.grace || '0'),
  };
}

function Editor({ program, onSaved }: { program: Program; onSaved: () => void }) {
  const [d, setD] = useState(() => draftOf(program));
  const row = (key: number, k: keyof Omit<Row, 'key'>) => (e: { currentTarget: { value: string } }) => {
    const value = e.currentTarget.value;
    setD((o) => ({ ...o, rows: o.rows.map((r) => (r.key === key ? { ...r, [k]: value } : r)) }));
  };
  const save = useAction(async () => {
    await ok(api().PUT('/loyalty/tiers', { body: bodyOf(d) }));
    onSaved();
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      {d.rows.map((r, i) => (
        <fieldset class="tier" key={r.key}>
          <legend>Tier {i + 1}</legend>
          <Field label="Tier id" hint="lower-case letters, digits, _ and -">
            <input required value={r.tier_id} onInput={row(r.key, 'tier_id')} />
          </Field>
          <Field label="Name">
            <input required maxLength={100} value={r.name} onInput={row(r.key, 'name')} />
          </Field>
          <Field label="Threshold" hint="points earned in the window">
            <input type="number" required min={0} step={1} value={r.threshold} onInput={row(r.key, 'threshold')} />
          </Field>
          <Field label="Multiplier" hint="1 to 10, e.g. 1.5">
            <input inputMode="decimal" value={r.multiplier} onInput={row(r.key, 'multiplier')} />
          </Field>
          <Field label="Unlocks campaigns" hint="campaign ids, comma-separated">
            <input value={r.unlocks} onInput={row(r.key, 'unlocks')} />
          </Field>
          <button type="button" onClick={() => setD((o) => ({ ...o, rows: o.rows.filter((x) => x.key !== r.key) }))}>
            Remove tier {i + 1}
          </button>
        </fieldset>
      ))}
      <div class="actions">
        <button
          type="button"
          disabled={d.rows.length >= MAX_TIERS}
          onClick={() =>
            setD((o) => ({
              ...o,
              rows: [...o.rows, { key: ++keys, tier_id: '', name: '', threshold: '', multiplier: '1', unlocks: '' }],
            }))
          }
        >
          Add a tier
        </button>
      </div>
      <fieldset class="tier">
        <legend>Qualifying window</legend>
        <Field label="Window">
          <select
            value={d.window}
            onChange={(e) => setD((o) => ({ ...o, window: e.currentTarget.value as Draft['window'] }))}
          >
            <option value="calendar_year">Calendar year</option>
            <option value="rolling_months">Rolling months</option>
          </select>
        </Field>
        {d.window === 'rolling_months' ? (
          <Field label="Months" hint="1 to 36, the current one included">
            <input
              type="number"
              min={1}
              max={36}
              required
              value={d.months}
              onInput={(e) => setD((o) => ({ ...o, months: e.currentTarget.value }))}
            />
          </Field>
        ) : null}
        <Field label="Grace days" hint="days a tier still holds after its validity ends">
          <input
            type="number"
            min={0}
            max={366}
            value={d.grace}
            onInput={(e) => setD((o) => ({ ...o, grace: e.currentTarget.value }))}
          />
        </Field>
      </fieldset>
      <div class="actions">
        <button type="submit" class="primary" disabled={save.busy}>
          Save tiers
        </button>
      </div>
      <ErrorMessage error={save.error} />
    </form>
  );
}

export function Tiers() {
  const load = useLoad(() => ok(api().GET('/loyalty/tiers')), []);
  const [saved, setSaved] = useState(0);
  const p = load.data;
  return (
    <>
      <Section title="Tiers">
        <Loading load={load} />
        {p ? (
          <>
            <Table
              caption={`Tiers, lowest threshold first (window: ${p.window.type === 'calendar_year' ? 'calendar year' : `last ${p.window.months} months`}; grace ${p.grace_days} days)`}
              empty="No tiers yet: add them below."
              rowKey={(t) => t.tier_id}
              rows={p.tiers}
              columns={[
                { label: 'Tier', cell: (t) => t.name },
                { label: 'Id', cell: (t) => <code>{t.tier_id}</code> },
                { label: 'Threshold', num: true, cell: (t) => num(t.threshold) },
                { label: 'Multiplier', num: true, cell: (t) => t.multiplier },
                { label: 'Unlocks', cell: (t) => t.unlocks.join(', ') || '—' },
              ]}
            />
            <p>Last changed: {when(p.updated_at)}</p>
          </>
        ) : null}
        {saved ? (
          <Notice>Tiers saved. Upgrades apply at a member's next earning, downgrades at their review.</Notice>
        ) : null}
      </Section>
      {p ? (
        <Section title="Edit tiers">
          <Editor
            key={`${p.updated_at}-${saved}`}
            program={p}
            onSaved={() => {
              setSaved((n) => n + 1);
              load.reload();
            }}
          />
        </Section>
      ) : null}
    </>
  );
}
