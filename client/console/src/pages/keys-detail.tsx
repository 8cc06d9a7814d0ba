/**
 * One key's panel: its facts, its name (PATCH /api/keys/{key_id}), its requests by day (a bar
 * chart), and rotation or revocation, each behind a confirmation that says what will happen.
 */
import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { api, ok } from '../api.ts';
import {
  Chart,
  Confirm,
  ErrorMessage,
  Field,
  Loading,
  Notice,
  num,
  Section,
  useAction,
  useLoad,
  when,
} from '../ui.tsx';
import { isSignedInKey, type ListedKey, StatusBadge } from './keys.tsx';

const OUTCOMES = [
  ['success', 'Succeeded'],
  ['client_error', 'Refused as malformed or not found'],
  ['forbidden', 'Forbidden'],
  ['rate_limited', 'Rate limited'],
  ['no_credits', 'Out of credits'],
  ['server_error', 'Server errors'],
] as const;

/** The day `YYYY-MM-DD` (UTC) as the chart's x: seconds since the epoch. */
const dayToSeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

function Usage({ k }: { k: ListedKey }) {
  const [days, setDays] = useState(30);
  const load = useLoad(
    () => ok(api().GET('/api/keys/{key_id}/usage', { params: { path: { key_id: k.key_id }, query: { days } } })),
    [k.key_id, days],
  );
  const u = load.data;
  // New arrays only when the answer changes, so the chart is not redrawn at every render.
  const x = useMemo(() => (u ? u.by_day.map((d) => dayToSeconds(d.day)) : []), [u]);
  const series = useMemo(() => (u ? [{ label: 'Requests', values: u.by_day.map((d) => d.total) }] : []), [u]);
  return (
    <section class="usage" aria-labelledby="usage-title">
      <h3 id="usage-title">Usage</h3>
      <form class="row" onSubmit={(e) => e.preventDefault()}>
        <Field label="Period">
          <select value={String(days)} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            <option value="7">Last 7 days</option>
            <option value="30">Last 30 days</option>
            <option value="90">Last 90 days</option>
          </select>
        </Field>
        <button type="button" onClick={load.reload} disabled={load.loading}>
          Refresh usage
        </button>
      </form>
      <p class="muted">Counted by each edge process and written every few seconds: the last uses may take a moment.</p>
      <Loading load={load} />
      {u ? (
        <>
          <Chart title={`Requests per day (UTC), ${u.from} to ${u.to}`} x={x} xLabel="Day" series={series} bars />
          <dl class="facts">
            <dt>Requests in all</dt>
            <dd data-testid="usage-total">{num(u.totals.total)}</dd>
            {OUTCOMES.map(([field, label]) => (
              <Fragment key={field}>
                <dt>{label}</dt>
                <dd>{num(u.totals[field])}</dd>
              </Fragment>
            ))}
          </dl>
        </>
      ) : null}
    </section>
  );
}

function Rename({ k, onChanged }: { k: ListedKey; onChanged: (message: string) => void }) {
  const [name, setName] = useState(k.name ?? '');
  const action = useAction(async () => {
    const next = name.trim() || null;
    await ok(api().PATCH('/api/keys/{key_id}', { params: { path: { key_id: k.key_id } }, body: { name: next } }));
    onChanged(next ? `The key is now named “${next}”.` : 'The key’s name was removed.');
  });
  return (
    <form
      class="row"
      aria-label="Name the key"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run();
      }}
    >
      <Field label="Name" hint="At most 100 characters; empty removes the name.">
        <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <button type="submit" disabled={action.busy}>
        Save name
      </button>
      <ErrorMessage error={action.error} />
    </form>
  );
}

/** The new secret, shown once: closing the dialog forgets it (the platform keeps only its hash). */
function SecretDialog({ secret, onClose }: { secret: string; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="secret-title" onCancel={onClose}>
      <h2 id="secret-title">The new key</h2>
      <p>Store it now: it is shown this once and cannot be read again. The old key is refused once its grace ends.</p>
      <Field label="New API key">
        <input class="secret" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <div class="actions">
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          Copy
        </button>
        <button type="button" class="primary" onClick={onClose}>
          I have stored it
        </button>
      </div>
      {copied ? <Notice>Copied.</Notice> : null}
    </dialog>
  );
}

export function KeyDetail({ k, onChanged }: { k: ListedKey; onChanged: () => void }) {
  const [asking, setAsking] = useState<'revoke' | 'rotate' | undefined>();
  const [grace, setGrace] = useState('0');
  const [secret, setSecret] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const changed = (message: string) => {
    setDone(message);
    onChanged();
  };
  const revoke = useAction(async () => {
    const out = await ok(
      api().POST('/api/session-service/revoke_api_key', { body: { user_id: k.user_id, api_key: k.key_id } }),
    );
    changed(`${out.message}: ${out.key_id} is refused from its next request.`);
  });
  const rotate = useAction(async () => {
    const out = await ok(
      api().POST('/api/session-service/rotate_api_key', {
        body: { user_id: k.user_id, key_id: k.key_id, grace_seconds: Number(grace) || 0 },
      }),
    );
    setSecret(out.api_key);
    changed(
      `Rotated: the new key is ${out.metadata.key_id}; the old one is ${out.previous.status} (refused from ${when(out.previous.expires_at)}).`,
    );
  });
  const error = revoke.error ?? rotate.error;
  const signedIn = isSignedInKey(k);
  const label = k.name ?? k.key_id;
  return (
    <Section title={`Key ${label}`}>
      {done ? <Notice>{done}</Notice> : null}
      <ErrorMessage error={error} />
      <dl class="facts">
        <dt>Key</dt>
        <dd>
          <code>{k.key}</code> (<code>{k.key_id}</code>)
        </dd>
        <dt>Owner</dt>
        <dd>
          {k.idp_id} (<code>{k.user_id}</code>)
        </dd>
        <dt>Permissions</dt>
        <dd>{k.permissions.join(', ')}</dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge k={k} />
        </dd>
        <dt>Created</dt>
        <dd>{when(k.created_at)}</dd>
        <dt>Last used</dt>
        <dd>{when(k.last_used)}</dd>
        <dt>Expires</dt>
        <dd>{when(k.expires_at)}</dd>
        {k.rotated_to ? (
          <>
            <dt>Replaced by</dt>
            <dd>
              <code>{k.rotated_to}</code>
            </dd>
          </>
        ) : null}
        {k.credits ? (
          <>
            <dt>Credits left</dt>
            <dd>{num(k.credits.remaining)}</dd>
          </>
        ) : null}
      </dl>
      <Rename k={k} onChanged={changed} />
      <div class="actions">
        <button type="button" disabled={k.status !== 'active' || rotate.busy} onClick={() => setAsking('rotate')}>
          Rotate key
        </button>
        <button
          type="button"
          class="danger"
          disabled={k.status === 'revoked' || revoke.busy}
          onClick={() => setAsking('revoke')}
        >
          Revoke key
        </button>
      </div>
      <Usage k={k} />
      {asking ? (
        <Confirm
          open
          title={asking === 'revoke' ? `Revoke ${label}?` : `Rotate ${label}?`}
          confirmLabel={asking === 'revoke' ? 'Revoke' : 'Rotate'}
          danger
          onCancel={() => setAsking(undefined)}
          onConfirm={() => {
            const which = asking;
            setAsking(undefined);
            void (which === 'revoke' ? revoke.run() : rotate.run());
          }}
        >
          {asking === 'revoke' ? (
            <p>
              {k.idp_id}’s key <code>{k.key}</code> will be refused from its very next request. This cannot be undone.
            </p>
          ) : (
            <>
              <p>
                A new key with the same user, permissions, limits and expiry replaces <code>{k.key}</code>. Its secret
                is shown once. The old key is refused once the grace below ends (0: at once).
              </p>
              <Field label="Grace for the old key (seconds)">
                <input
                  type="number"
                  min={0}
                  max={604800}
                  value={grace}
                  onInput={(e) => setGrace(e.currentTarget.value)}
                />
              </Field>
            </>
          )}
          {signedIn ? (
            <p class="error">
              This is the key you are signed in with: the console stops working with it
              {asking === 'rotate' ? ' once the grace ends; sign in again with the new key' : ''}.
            </p>
          ) : null}
        </Confirm>
      ) : null}
      {secret ? <SecretDialog secret={secret} onClose={() => setSecret(undefined)} /> : null}
    </Section>
  );
}
