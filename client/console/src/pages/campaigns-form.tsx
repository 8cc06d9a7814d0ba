/**
 * The campaign form, for a new campaign (POST) and an edit (PATCH): the fields an operator
 * usually sets, and the rarer conditions as JSON checked in the browser before it is sent.
 */
import { useState } from 'preact/hooks';

import type { RequestBody, Schemas } from '../../../src/index.ts';
import { api, ok } from '../api.ts';
import { ErrorMessage, Field, useAction } from '../ui.tsx';

export type Campaign = Schemas['Campaign'];
type CreateBody = RequestBody<'postLoyaltyCampaigns'>;
type PatchBody = RequestBody<'patchLoyaltyCampaignsByCampaignId'>;

const PERIODS = ['ever', 'day', 'week', 'month'] as const;
const EFFECTS = {
  bonus: { label: 'Bonus points', value: 'Points added', hint: 'a whole number' },
  multiplier: {
    label: 'Multiplier',
    value: 'Factor',
    hint: 'e.g. 2 (adds base × (factor − 1)); more than 1, at most 10',
  },
  per_amount: { label: 'Points per amount', value: 'Rate', hint: "points per unit of the award's amount" },
} as const;
type EffectType = keyof typeof EFFECTS;

/** Conditions other than action types, as the platform names them (empty: no condition). */
const NO_CONDITIONS = {
  min_amount: null,
  categories: [],
  tiers: [],
  nth: null,
  countries: [],
  signed_up_after: null,
  signed_up_before: null,
};

interface State {
  name: string;
  description: string;
  starts: string;
  ends: string;
  effectType: EffectType;
  effectValue: string;
  budget: string;
  actionTypes: string;
  conditions: string;
  stacking: 'stackable' | 'exclusive';
  priority: string;
  maxPerAward: string;
  limitMax: string;
  limitPer: (typeof PERIODS)[number];
}

/** An ISO instant as a datetime-local value in the browser's zone (minutes). */
function local(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

function stateOf(c: Campaign | undefined): State {
  if (!c)
    return {
      name: '',
      description: '',
      starts: local(new Date().toISOString()),
      ends: '',
      effectType: 'bonus',
      effectValue: '',
      budget: '',
      actionTypes: '',
      conditions: '{}',
      stacking: 'stackable',
      priority: '0',
      maxPerAward: '',
      limitMax: '',
      limitPer: 'day',
    };
  const { action_types, ...rest } = c.conditions;
  // Only the conditions set, so the textarea stays short.
  const set = Object.fromEntries(
    Object.entries(rest).filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0)),
  );
  const type = c.effect.type as EffectType;
  return {
    name: c.name,
    description: c.description ?? '',
    starts: local(c.starts_at),
    ends: local(c.ends_at),
    effectType: type,
    effectValue: String(type === 'bonus' ? c.effect.points : type === 'multiplier' ? c.effect.factor : c.effect.rate),
    budget: c.budget === null ? '' : String(c.budget),
    actionTypes: action_types.join(', '),
    conditions: JSON.stringify(set, null, 2),
    stacking: c.stacking,
    priority: String(c.priority),
    maxPerAward: c.max_points_per_award === null ? '' : String(c.max_points_per_award),
    limitMax: c.limit_per_member ? String(c.limit_per_member.max) : '',
    limitPer: (c.limit_per_member?.per as State['limitPer']) ?? 'day',
  };
}

const int = (s: string) => (s.trim() === '' ? null : Number(s));
const iso = (s: string) => (s ? new Date(s).toISOString() : null);

/** The body the form stands for; throws a readable error when the conditions are not JSON. */
function bodyOf(s: State): Omit<CreateBody, 'organization_id'> {
  let extra: unknown;
  try {
    extra = JSON.parse(s.conditions.trim() || '{}');
  } catch (err) {
    throw new Error(`Other conditions: not valid JSON (${(err as Error).message})`);
  }
  if (!extra || typeof extra !== 'object' || Array.isArray(extra))
    throw new Error('Other conditions: a JSON object is expected, such as {"min_amount": "20"}');
  const effect: CreateBody['effect'] =
    s.effectType === 'bonus'
      ? { type: 'bonus', points: Number(s.effectValue) }
      : s.effectType === 'multiplier'
        ? { type: 'multiplier', factor: s.effectValue.trim() }
        : { type: 'per_amount', rate: s.effectValue.trim() };
  const actions = s.actionTypes
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  return {
    name: s.name,
    description: s.description.trim() || null,
    starts_at: iso(s.starts) ?? '',
    ends_at: iso(s.ends),
    effect,
    budget: int(s.budget),
    conditions: { ...NO_CONDITIONS, ...(extra as object), action_types: actions } as CreateBody['conditions'],
    stacking: s.stacking,
    priority: int(s.priority) ?? 0,
    max_points_per_award: int(s.maxPerAward),
    limit_per_member: s.limitMax.trim() ? { max: Number(s.limitMax), per: s.limitPer } : null,
  };
}

/** What the form changed of the campaign: only those fields, so an untouched one makes no version. */
function changes(before: State, now: State): Omit<PatchBody, 'organization_id'> {
  const a = bodyOf(before) as Record<string, unknown>;
  const b = bodyOf(now) as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(b)
      .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
      .map((k) => [k, b[k]]),
  );
}

export function CampaignForm({ campaign, onSaved }: { campaign?: Campaign; onSaved: (c: Campaign) => void }) {
  const [initial] = useState(() => stateOf(campaign));
  const [s, setS] = useState(initial);
  const set =
    <K extends keyof State>(k: K) =>
    (e: { currentTarget: { value: string } }) =>
      setS((old) => ({ ...old, [k]: e.currentTarget.value }));
  const save = useAction(async () => {
    if (!campaign) {
      const made = await ok(api().POST('/loyalty/campaigns', { body: bodyOf(s) as CreateBody }));
      onSaved(made);
      setS(stateOf(undefined));
      return;
    }
    const patch = changes(initial, s);
    if (Object.keys(patch).length === 0) throw new Error('Nothing changed: edit a field first');
    const path = { campaign_id: campaign.campaign_id };
    onSaved(await ok(api().PATCH('/loyalty/campaigns/{campaign_id}', { params: { path }, body: patch as PatchBody })));
  });
  const effect = EFFECTS[s.effectType];
  const prefix = campaign ? 'edit' : 'new';
  return (
    <form
      class="campaign-form"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <Field label="Name">
        <input required maxLength={100} value={s.name} onInput={set('name')} />
      </Field>
      <Field label="Description">
        <input maxLength={1000} value={s.description} onInput={set('description')} />
      </Field>
      <Field label="Starts" hint="your browser's time">
        <input type="datetime-local" required value={s.starts} onInput={set('starts')} />
      </Field>
      <Field label="Ends" hint="empty: runs until ended">
        <input type="datetime-local" value={s.ends} onInput={set('ends')} />
      </Field>
      <Field label="Effect">
        <select value={s.effectType} onChange={set('effectType')}>
          {Object.entries(EFFECTS).map(([k, v]) => (
            <option value={k}>{v.label}</option>
          ))}
        </select>
      </Field>
      <Field label={effect.value} hint={effect.hint}>
        <input required inputMode="decimal" value={s.effectValue} onInput={set('effectValue')} />
      </Field>
      <Field label="Budget (points)" hint="empty: no budget">
        <input type="number" min={1} step={1} value={s.budget} onInput={set('budget')} />
      </Field>
      <Field label="Action types" hint="comma-separated; empty: every action">
        <input value={s.actionTypes} onInput={set('actionTypes')} placeholder="purchase, review" />
      </Field>
      <Field label="Stacking">
        <select value={s.stacking} onChange={set('stacking')}>
          <option value="stackable">Stackable</option>
          <option value="exclusive">Exclusive</option>
        </select>
      </Field>
      <Field label="Priority" hint="-1000 to 1000">
        <input type="number" step={1} value={s.priority} onInput={set('priority')} />
      </Field>
      <Field label="Most points per award" hint="empty: no cap">
        <input type="number" min={1} step={1} value={s.maxPerAward} onInput={set('maxPerAward')} />
      </Field>
      <Field label="Limit per member" hint="awards it applies to; empty: no limit">
        <input type="number" min={1} step={1} value={s.limitMax} onInput={set('limitMax')} />
      </Field>
      <Field label="Limit period">
        <select value={s.limitPer} onChange={set('limitPer')}>
          {PERIODS.map((p) => (
            <option value={p}>{p}</option>
          ))}
        </select>
      </Field>
      <label class="field wide" for={`${prefix}-conditions`}>
        <span>Other conditions (JSON)</span>
        <textarea
          id={`${prefix}-conditions`}
          rows={4}
          spellcheck={false}
          value={s.conditions}
          onInput={set('conditions')}
        />
        <small>min_amount ("20"), categories, tiers, nth, countries (["FR"]), signed_up_after, signed_up_before.</small>
      </label>
      <div class="actions">
        <button type="submit" class="primary" disabled={save.busy}>
          {campaign ? 'Save changes' : 'Create draft'}
        </button>
      </div>
      <ErrorMessage error={save.error} />
    </form>
  );
}
