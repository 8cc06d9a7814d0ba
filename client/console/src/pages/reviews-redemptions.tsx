/**
 * Redemptions in needs_review: the provider's outcome is unknown and the points stay held until an
 * admin settles them as completed (the points stay spent) or refunded (they come back).
 */
import { useState } from 'preact/hooks';

import { api, ok } from '../api.ts';
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

type Outcome = 'completed' | 'refunded';

/** What the redemption records of the provider's reply: who, its transaction, and why it is in review. */
function ProviderAnswer({
  r,
}: {
  r: { provider: string | null; provider_transaction_id: string | null; status_reason: string | null };
}) {
  return (
    <>
      {r.status_reason ?? 'No answer recorded'}
      {r.provider || r.provider_transaction_id ? (
        <small class="provider">
          {' '}
          ({r.provider ?? 'provider'}
          {r.provider_transaction_id ? `, transaction ${r.provider_transaction_id}` : ''})
        </small>
      ) : null}
    </>
  );
}

export function RedemptionsQueue({ id }: { id?: string }) {
  const [page, setPage] = useState(1);
  const [notice, setNotice] = useState<string>();
  const list = useLoad(
    () =>
      ok(api().GET('/api/gifts/redemptions', { params: { query: { status: 'needs_review', page, limit: LIMIT } } })),
    [page, id],
  );
  return (
    <>
      {notice ? <Notice>{notice}</Notice> : null}
      {id ? (
        <SettleRedemption
          key={id}
          id={id}
          onSettled={(text) => {
            setNotice(text);
            location.hash = '#/reviews/redemptions';
          }}
        />
      ) : null}
      <Section title="Redemptions waiting for review">
        <Loading load={list} />
        {list.data ? (
          <>
            <Table
              caption="Redemptions in review, newest first"
              rowKey={(r) => r.id}
              rows={list.data.redemptions}
              empty="No redemption waits for review."
              columns={[
                {
                  label: 'Member',
                  cell: (r) => <a href={`#/members/${encodeURIComponent(r.user_id)}`}>{r.user_id}</a>,
                },
                {
                  label: 'Gift',
                  cell: (r) => (
                    <>
                      {r.gift_name}
                      {r.amount != null ? ` · ${r.amount} ${r.currency ?? ''}` : ''}
                    </>
                  ),
                },
                { label: 'Points', num: true, cell: (r) => num(r.points_spent) },
                { label: 'When', cell: (r) => when(r.created_at) },
                { label: "Provider's answer", cell: (r) => <ProviderAnswer r={r} /> },
                {
                  label: 'Action',
                  cell: (r) => (
                    <a
                      href={`#/reviews/redemptions/${encodeURIComponent(r.id)}`}
                      aria-label={`Settle ${r.gift_name} of ${r.user_id}`}
                    >
                      Settle…
                    </a>
                  ),
                },
              ]}
            />
            <Pager page={page} limit={LIMIT} total={list.data.total} onPage={setPage} label="Redemptions in review" />
          </>
        ) : null}
      </Section>
    </>
  );
}

function SettleRedemption({ id, onSettled }: { id: string; onSettled: (notice: string) => void }) {
  const one = useLoad(
    () => ok(api().GET('/api/gifts/redemptions/{redemption_id}', { params: { path: { redemption_id: id } } })),
    [id],
  );
  const [reason, setReason] = useState('');
  const [asked, setAsked] = useState<Outcome | null>(null);
  const settle = useAction(async (outcome: Outcome) => {
    const res = await ok(
      api().POST('/api/gifts/redemptions/{redemption_id}/settle', {
        params: { path: { redemption_id: id } },
        body: { outcome, ...(reason.trim() ? { reason: reason.trim() } : {}) },
      }),
    );
    const r = res.redemption;
    onSettled(
      r.status === 'refunded'
        ? `Refunded: ${num(r.points_refunded)} points went back to ${r.user_id} for ${r.gift_name}.`
        : `Completed: ${r.gift_name} for ${r.user_id} stays paid with ${num(r.points_spent)} points.`,
    );
  });
  const r = one.data?.redemption;
  return (
    <Section title={r ? `Settle ${r.gift_name}` : 'Settle a redemption'}>
      <Loading load={one} />
      {r ? (
        <div class="review-item">
          <dl class="facts">
            <dt>Member</dt>
            <dd>
              <a href={`#/members/${encodeURIComponent(r.user_id)}`}>{r.user_id}</a>
            </dd>
            <dt>Gift</dt>
            <dd>
              {r.gift_name}
              {r.gift_type ? ` (${r.gift_type})` : ''}
            </dd>
            <dt>Points held</dt>
            <dd>{num(r.points_spent)}</dd>
            <dt>Redeemed</dt>
            <dd>{when(r.created_at)}</dd>
            <dt>Status</dt>
            <dd>
              <Badge tone={r.status === 'needs_review' ? 'warn' : undefined}>{r.status}</Badge>
            </dd>
            <dt>Provider's answer</dt>
            <dd>
              <ProviderAnswer r={r} />
            </dd>
            {r.phone_number ? (
              <>
                <dt>Phone</dt>
                <dd>{r.phone_number}</dd>
              </>
            ) : null}
          </dl>
          {r.status === 'needs_review' ? (
            <>
              <Field label="Note for admins" hint="What you found; the member sees a fixed reason.">
                <textarea value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} />
              </Field>
              <div class="actions">
                <button type="button" class="primary" disabled={settle.busy} onClick={() => setAsked('completed')}>
                  Settle as completed
                </button>
                <button type="button" class="danger" disabled={settle.busy} onClick={() => setAsked('refunded')}>
                  Refund the points
                </button>
                <a href="#/reviews/redemptions">Back to the queue</a>
              </div>
            </>
          ) : (
            <p>This redemption is {r.status}: there is nothing to settle.</p>
          )}
          <ErrorMessage error={settle.error} />
          <Confirm
            open={asked !== null}
            title={asked === 'refunded' ? 'Refund the points?' : 'Settle as completed?'}
            confirmLabel={asked === 'refunded' ? 'Refund the points' : 'Settle as completed'}
            danger={asked === 'refunded'}
            onCancel={() => setAsked(null)}
            onConfirm={() => {
              const outcome = asked!;
              setAsked(null);
              void settle.run(outcome);
            }}
          >
            {asked === 'refunded' ? (
              <p>
                The provider did not deliver {r.gift_name} and never will: the {num(r.points_spent)} held points go back
                to {r.user_id}. The provider is asked once more first; if it delivered, the refund is refused.
              </p>
            ) : (
              <p>
                The provider delivered {r.gift_name}: the {num(r.points_spent)} held points stay spent. The provider is
                asked once more first; if it refused the order, settle it as refunded instead.
              </p>
            )}
          </Confirm>
        </div>
      ) : null}
    </Section>
  );
}
