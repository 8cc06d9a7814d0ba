/**
 * One webhook endpoint (#/webhooks/<id>): what it is, its queue, and what an admin does with it:
 * pause/resume, a test event, a new signing secret (shown once), its deliveries and a replay.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

import { api, ok } from '../api.ts';
import { Confirm, ErrorMessage, Field, Loading, Notice, Section, useAction, useLoad, when } from '../ui.tsx';
import { Deliveries, Replay } from './webhooks-deliveries.tsx';
import { age, answer, idPath, rate, StateBadge, statsOf } from './webhooks-parts.tsx';

const GRACES = [
  { seconds: 86_400, label: '24 hours' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 7 * 86_400, label: '7 days' },
  { seconds: 0, label: 'no time: it stops now' },
];

async function endpointAndStats(id: string) {
  const [{ endpoint }, stats] = await Promise.all([
    ok(api().GET('/api/webhooks/endpoints/{id}', idPath(id))),
    statsOf(id),
  ]);
  return { endpoint, stats };
}

/** The new secret, once: a modal the operator closes after copying it (it is then forgotten). */
function SecretDialog({ secret, onClose }: { secret: string; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (ref.current && !ref.current.open) ref.current.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="secret-title" onCancel={onClose}>
      <h2 id="secret-title">New signing secret</h2>
      <p>Copy it now and give it to the receiver: it will not be shown again.</p>
      <Field label="Signing secret">
        <input class="secret" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <div class="actions">
        <button type="button" class="primary" onClick={onClose}>
          Done, close
        </button>
      </div>
    </dialog>
  );
}

export function EndpointPage({ id }: { id: string }) {
  // Bumped by every action that succeeds, so the facts, the queue and the deliveries read again.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  const load = useLoad(() => endpointAndStats(id), [id, version]);
  const [notice, setNotice] = useState<string>();
  const [grace, setGrace] = useState(GRACES[0].seconds);
  const [confirming, setConfirming] = useState(false);
  const [secret, setSecret] = useState<string>();
  const act = useAction(async (what: () => Promise<string>) => {
    setNotice(undefined);
    setNotice(await what());
    changed();
  });

  const e = load.data?.endpoint;
  const s = load.data?.stats;
  const graceLabel = GRACES.find((g) => g.seconds === grace)!.label;

  const pause = () =>
    act.run(async () => {
      await ok(api().POST('/api/webhooks/endpoints/{id}/pause', idPath(id)));
      return 'Paused: its events queue and nothing is sent until it is resumed.';
    });
  const resume = () =>
    act.run(async () => {
      await ok(api().POST('/api/webhooks/endpoints/{id}/resume', idPath(id)));
      return 'Resumed: what queued meanwhile is being sent, in order.';
    });
  const ping = () =>
    act.run(async () => {
      const r = await ok(api().POST('/api/webhooks/endpoints/{id}/test', idPath(id)));
      return `Test event ${r.event_id} queued: its delivery shows below.`;
    });
  const rotate = () => {
    setConfirming(false);
    void act.run(async () => {
      const r = await ok(
        api().POST('/api/webhooks/endpoints/{id}/rotate-secret', { ...idPath(id), body: { grace_seconds: grace } }),
      );
      setSecret(r.secret);
      return grace
        ? `Secret rotated: the previous one also signs until ${when(r.endpoint.previous_secret_expires_at)}.`
        : 'Secret rotated: the previous one no longer signs.';
    });
  };

  return (
    <>
      <p>
        <a href="#/webhooks">All endpoints</a>
      </p>
      <h1>Webhook endpoint</h1>
      <Loading load={load} />
      {e && s ? (
        <>
          <Section
            title="Endpoint"
            actions={
              <button type="button" onClick={load.reload} disabled={load.loading}>
                Refresh
              </button>
            }
          >
            <dl class="facts">
              <dt>URL</dt>
              <dd>
                <code>{e.url}</code>
              </dd>
              <dt>Identifier</dt>
              <dd>
                <code>{e.id}</code>
              </dd>
              {e.description ? (
                <>
                  <dt>Description</dt>
                  <dd>{e.description}</dd>
                </>
              ) : null}
              <dt>Events</dt>
              <dd>{e.events.includes('*') ? 'all' : e.events.join(', ')}</dd>
              <dt>State</dt>
              <dd>
                <StateBadge state={s.state} />
                {e.paused_at ? ` since ${when(e.paused_at)}` : ''}
                {e.disabled_reason ? ` (${e.disabled_reason})` : ''}
              </dd>
              <dt>Failing since</dt>
              <dd>{when(e.failing_since)}</dd>
              <dt>Previous secret signs until</dt>
              <dd>{when(e.previous_secret_expires_at)}</dd>
              <dt>Created</dt>
              <dd>{when(e.created_at)}</dd>
            </dl>
          </Section>
          <Section title="Queue">
            <dl class="facts">
              <dt>Backlog</dt>
              <dd>{s.backlog.toLocaleString()} queued</dd>
              <dt>Oldest undelivered</dt>
              <dd>
                {age(s.oldest_undelivered_age_seconds)}
                {s.oldest_undelivered_at ? ` (queued ${when(s.oldest_undelivered_at)})` : ''}
              </dd>
              <dt>Success (24 h)</dt>
              <dd>{rate(s.last_24h)}</dd>
              <dt>Attempts in all</dt>
              <dd>
                {s.attempts_total.succeeded.toLocaleString()} succeeded, {s.attempts_total.failed.toLocaleString()}{' '}
                failed
              </dd>
              <dt>Last success</dt>
              <dd>{when(s.last_success_at)}</dd>
              <dt>Last error</dt>
              <dd>
                {s.last_error
                  ? `${answer(s.last_error.status)}${s.last_error.error ? `: ${s.last_error.error}` : ''}, ${when(s.last_error.at)}`
                  : '—'}
              </dd>
            </dl>
          </Section>
          <Section title="Operations">
            <div class="actions">
              {e.paused_at ? (
                <button type="button" class="primary" disabled={act.busy} onClick={resume}>
                  Resume
                </button>
              ) : (
                <button type="button" disabled={act.busy} onClick={pause}>
                  Pause
                </button>
              )}
              <button type="button" disabled={act.busy} onClick={ping}>
                Send test event
              </button>
            </div>
            <form
              class="row rotate"
              onSubmit={(ev) => {
                ev.preventDefault();
                setConfirming(true);
              }}
            >
              <Field label="Previous secret keeps signing for">
                <select value={grace} onChange={(ev) => setGrace(Number(ev.currentTarget.value))}>
                  {GRACES.map((g) => (
                    <option value={g.seconds}>{g.label}</option>
                  ))}
                </select>
              </Field>
              <button type="submit" class="danger" disabled={act.busy}>
                Rotate secret…
              </button>
            </form>
            {notice ? <Notice>{notice}</Notice> : null}
            <ErrorMessage error={act.error} />
          </Section>
          <Deliveries id={id} version={version} onChanged={changed} />
          <Replay id={id} onChanged={changed} />
        </>
      ) : null}
      <Confirm
        open={confirming}
        title="Rotate the signing secret?"
        confirmLabel="Rotate secret"
        danger
        onConfirm={rotate}
        onCancel={() => setConfirming(false)}
      >
        <p>A new signing secret is made and shown once. It signs every request from now on.</p>
        <p>
          {grace
            ? `The current secret keeps signing too for ${graceLabel} (each request carries both signatures), then stops: update the receiver within that time.`
            : 'The current secret stops signing now: a receiver that still checks it refuses the requests until it has the new one.'}{' '}
          A secret rotated out earlier that still signs stops now.
        </p>
      </Confirm>
      {secret ? <SecretDialog secret={secret} onClose={() => setSecret(undefined)} /> : null}
    </>
  );
}
