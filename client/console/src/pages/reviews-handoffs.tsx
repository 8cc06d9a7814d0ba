/**
 * Support handoffs: conversations the assistant handed to a person. An admin claims one, replies
 * into the member's conversation (the member reads it where they read the assistant) and closes it.
 */
import { useState } from 'preact/hooks';

import type { components } from '../../../src/schema.ts';
import { api, ok, session } from '../api.ts';
import {
  Badge,
  Confirm,
  ErrorMessage,
  Field,
  Loading,
  newId,
  Notice,
  Pager,
  Section,
  Table,
  useAction,
  useLoad,
  when,
} from '../ui.tsx';

type Handoff = components['schemas']['SupportHandoff'];
type Status = 'open' | 'claimed';

const LIMIT = 20;
const REASONS: Record<Handoff['reason'], string> = {
  no_answer: 'No answer found',
  model_unsure: 'Assistant unsure',
  asked_for_person: 'Asked for a person',
};

/** An Idempotency-Key (getRandomValues: randomUUID needs a secure context). */
const who = (user_id: string | null) => (user_id && user_id === session().user_id ? 'you' : (user_id ?? '—'));

/**
 * One handoff by id: the API lists handoffs but has no read of one, so the lists are walked
 * (open first, then claimed, then closed) until it shows.
 */
async function findHandoff(id: string): Promise<Handoff | null> {
  for (const status of ['open', 'claimed', 'closed'] as const) {
    for (let page = 1; page <= 20; page++) {
      const res = await ok(api().GET('/api/support/handoffs', { params: { query: { status, page, limit: 100 } } }));
      const found = res.handoffs.find((h) => h.handoff_id === id);
      if (found) return found;
      if (!res.has_more) break;
    }
  }
  return null;
}

function HandoffList({ status, refresh }: { status: Status; refresh: string }) {
  const [page, setPage] = useState(1);
  const list = useLoad(
    () => ok(api().GET('/api/support/handoffs', { params: { query: { status, page, limit: LIMIT } } })),
    [status, page, refresh],
  );
  return (
    <Section title={status === 'open' ? 'Open handoffs' : 'Claimed handoffs'}>
      <Loading load={list} />
      {list.data ? (
        <>
          <Table
            caption={
              status === 'open' ? 'Handoffs nobody claimed yet, newest first' : 'Handoffs being answered, newest first'
            }
            rowKey={(h) => h.handoff_id}
            rows={list.data.handoffs}
            empty={status === 'open' ? 'No handoff waits.' : 'No handoff is claimed.'}
            columns={[
              { label: 'Member', cell: (h) => <a href={`#/members/${encodeURIComponent(h.user_id)}`}>{h.user_id}</a> },
              { label: 'Question', cell: (h) => h.question },
              { label: 'Why', cell: (h) => REASONS[h.reason] ?? h.reason },
              { label: 'When', cell: (h) => when(h.created_at) },
              ...(status === 'claimed' ? [{ label: 'Claimed by', cell: (h: Handoff) => who(h.claimed_by) }] : []),
              {
                label: 'Action',
                cell: (h) => (
                  <a
                    href={`#/reviews/handoffs/${encodeURIComponent(h.handoff_id)}`}
                    aria-label={`Open the handoff of ${h.user_id} from ${when(h.created_at)}`}
                  >
                    Open…
                  </a>
                ),
              },
            ]}
          />
          <Pager page={page} limit={LIMIT} total={list.data.total} onPage={setPage} label={`${status} handoffs`} />
        </>
      ) : null}
    </Section>
  );
}

export function HandoffsQueue({ id }: { id?: string }) {
  const [notice, setNotice] = useState<string>();
  // A claim or a reply changes the lists too: their deps include this tick.
  const [tick, setTick] = useState(0);
  return (
    <>
      {notice ? <Notice>{notice}</Notice> : null}
      {id ? (
        <HandoffDetail
          key={id}
          id={id}
          onChanged={(text) => (setNotice(text), setTick((t) => t + 1))}
          onClosed={(text) => {
            setNotice(text);
            location.hash = '#/reviews/handoffs';
          }}
        />
      ) : null}
      <HandoffList status="open" refresh={`${id ?? ''}:${tick}`} />
      <HandoffList status="claimed" refresh={`${id ?? ''}:${tick}`} />
    </>
  );
}

/** The member's conversation, oldest first: each answer carries the question it answered. */
function Conversation({ h }: { h: Handoff }) {
  const load = useLoad(
    () =>
      ok(
        api().GET('/get_response/{conversation_id}', {
          params: { path: { conversation_id: h.conversation_id }, query: { user_id: h.user_id } },
        }),
      ),
    [h.conversation_id, h.replies.length],
  );
  const turns = [...(load.data?.responses ?? [])].reverse();
  return (
    <>
      <h3>Conversation</h3>
      <Loading load={load} />
      {load.data ? (
        <ol class="conversation">
          {turns.flatMap((r) => {
            const q = r.metadata.question;
            const agent = r.source === 'support_agent';
            return [
              typeof q === 'string' ? (
                <li key={`${r.response_id}:q`} class="member">
                  <span class="who">Member · {when(r.created_at)}</span>
                  {q}
                </li>
              ) : null,
              <li key={r.response_id} class={agent ? 'support_agent' : 'assistant'}>
                <span class="who">{agent ? 'Support agent' : 'Assistant'}</span>
                {r.message}
              </li>,
            ];
          })}
        </ol>
      ) : null}
    </>
  );
}

function HandoffDetail({
  id,
  onChanged,
  onClosed,
}: {
  id: string;
  onChanged: (notice: string) => void;
  onClosed: (notice: string) => void;
}) {
  const load = useLoad(() => findHandoff(id), [id]);
  const [text, setText] = useState('');
  // One key per draft: a retried send of the same reply adds nothing.
  const [draftKey, setDraftKey] = useState(() => newId('reply'));
  const [closing, setClosing] = useState(false);
  const path = { params: { path: { handoff_id: id } } };
  const claim = useAction(async () => {
    await ok(api().POST('/api/support/handoffs/{handoff_id}/claim', path));
    load.reload();
    onChanged('Handoff claimed: you can reply to the member.');
  });
  const reply = useAction(async () => {
    await ok(
      api().POST('/api/support/handoffs/{handoff_id}/reply', {
        params: { path: { handoff_id: id }, header: { 'Idempotency-Key': draftKey } },
        body: { text: text.trim() },
      }),
    );
    setText('');
    setDraftKey(newId('reply'));
    load.reload();
    onChanged('Reply sent: the member reads it in their conversation.');
  });
  const close = useAction(async () => {
    await ok(api().POST('/api/support/handoffs/{handoff_id}/close', path));
    onClosed('Handoff closed.');
  });
  const h = load.data;
  if (load.data === null) return <Section title="A handoff">{<p>No handoff {id} in this organization.</p>}</Section>;
  if (!h) return <Section title="A handoff">{<Loading load={load} />}</Section>;
  const mine = h.status === 'claimed' && h.claimed_by === session().user_id;
  return (
    <Section title={`Handoff of ${h.user_id}`}>
      <div class="review-item">
        <dl class="facts">
          <dt>Member</dt>
          <dd>
            <a href={`#/members/${encodeURIComponent(h.user_id)}`}>{h.user_id}</a>
          </dd>
          <dt>Why</dt>
          <dd>{REASONS[h.reason] ?? h.reason}</dd>
          <dt>Question</dt>
          <dd>{h.question}</dd>
          <dt>Status</dt>
          <dd>
            <Badge tone={h.status === 'open' ? 'warn' : h.status === 'claimed' ? 'ok' : undefined}>{h.status}</Badge>
            {h.claimed_by ? ` by ${who(h.claimed_by)} ${when(h.claimed_at)}` : ''}
          </dd>
          <dt>Opened</dt>
          <dd>{when(h.created_at)}</dd>
        </dl>
        <Conversation h={h} />
        {h.status === 'open' ? (
          <div class="actions">
            <button type="button" class="primary" disabled={claim.busy} onClick={() => void claim.run()}>
              Claim
            </button>
          </div>
        ) : null}
        {mine ? (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void reply.run();
            }}
          >
            <Field label="Reply to the member">
              <textarea required maxLength={4000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
            </Field>
            <div class="actions">
              <button type="submit" class="primary" disabled={reply.busy || !text.trim()}>
                Send reply
              </button>
            </div>
          </form>
        ) : h.status === 'claimed' ? (
          <p>Claimed by another admin: only they can reply.</p>
        ) : null}
        {h.status !== 'closed' ? (
          <div class="actions">
            <button type="button" class="danger" disabled={close.busy} onClick={() => setClosing(true)}>
              Close the handoff
            </button>
            <a href="#/reviews/handoffs">Back to the queue</a>
          </div>
        ) : null}
        <ErrorMessage error={claim.error ?? reply.error ?? close.error} />
      </div>
      <Confirm
        open={closing}
        title="Close this handoff?"
        confirmLabel="Close the handoff"
        danger
        onCancel={() => setClosing(false)}
        onConfirm={() => {
          setClosing(false);
          void close.run();
        }}
      >
        <p>
          The handoff leaves the queue and no more replies can be sent on it. If {h.user_id} asks for a person again, a
          new handoff opens.
        </p>
      </Confirm>
    </Section>
  );
}
