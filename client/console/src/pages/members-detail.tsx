/**
 * A member's page: profile, points, tier, history (with reversals), keys and sessions, and the
 * actions an operator takes on them (members-actions.tsx).
 */
import { useState } from 'preact/hooks';

import { api, ApiError, ok } from '../api.ts';
import { Badge, Loading, Notice, num, Pager, Section, Table, useLoad, when } from '../ui.tsx';
import { AwardPoints, EraseMember, ErasureStatus, ExportData, type Member, ReverseButton } from './members-actions.tsx';

/** The member, or the erasure that removed them (only their user_id finds it then). */
async function loadMember(ref: string) {
  try {
    return { user: (await ok(api().GET('/api/users/{user_ref}', { params: { path: { user_ref: ref } } }))).user };
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) throw err;
    const erased = await api().GET('/api/users/{user_ref}/erasure', { params: { path: { user_ref: ref } } });
    if (erased.data) return { erasure: erased.data.erasure };
    throw err;
  }
}

export function MemberDetail({ userRef }: { userRef: string }) {
  const [erasing, setErasing] = useState(false);
  const load = useLoad(() => loadMember(userRef), [userRef, erasing]);
  const user = load.data?.user;
  const heading = user ? `Member ${user.display_name ?? user.idp_id}` : 'Member';
  return (
    <>
      <p class="crumbs">
        <a href="#/members">← Members</a>
      </p>
      <h1>{heading}</h1>
      <Loading load={load} />
      {load.data?.erasure || erasing ? (
        <ErasureStatus userId={load.data?.erasure?.user_id ?? user?.user_id ?? userRef} />
      ) : user ? (
        <Loaded member={user} onErased={() => setErasing(true)} />
      ) : null}
    </>
  );
}

function Loaded({ member, onErased }: { member: Member; onErased: () => void }) {
  // Bumped by an award or a reversal: balance, tier and history are read again.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  return (
    <>
      <Profile member={member} />
      <div class="member-grid">
        <Points member={member} version={version} />
        <Tier member={member} version={version} />
      </div>
      <AwardPoints member={member} onDone={changed} />
      <History member={member} version={version} onChanged={changed} />
      <Keys member={member} />
      <Sessions member={member} />
      <Section title="Personal data">
        <ExportData member={member} />
        <EraseMember member={member} onErased={onErased} />
      </Section>
    </>
  );
}

function Profile({ member: m }: { member: Member }) {
  return (
    <Section title="Profile">
      <dl class="facts">
        <dt>Display name</dt>
        <dd>{m.display_name ?? '—'}</dd>
        <dt>idp_id</dt>
        <dd>
          <code>{m.idp_id}</code>
        </dd>
        <dt>Email</dt>
        <dd>{m.email ?? '—'}</dd>
        <dt>User id</dt>
        <dd>
          <code>{m.user_id}</code>
        </dd>
        <dt>Joined</dt>
        <dd>{when(m.created_at)}</dd>
        <dt>Updated</dt>
        <dd>{when(m.updated_at)}</dd>
        <dt>Shared rate limit</dt>
        <dd>
          {m.user_rate_limit_per_minute == null ? 'Each key its own' : `${m.user_rate_limit_per_minute} a minute`}
        </dd>
      </dl>
    </Section>
  );
}

function Points({ member, version }: { member: Member; version: number }) {
  const load = useLoad(async () => {
    const res = await api().GET('/loyalty/points/{internal_user_id}', {
      params: { path: { internal_user_id: member.user_id } },
    });
    // Before the member's first ledger entry the platform answers 404: nothing earned yet.
    if (res.response.status === 404) return { points: 0, pending_points: 0, expiring: [] };
    return ok(Promise.resolve(res));
  }, [member.user_id, version]);
  const p = load.data;
  return (
    <Section title="Points">
      <Loading load={load} />
      {p ? (
        <>
          <dl class="facts">
            <dt>Balance</dt>
            <dd class="balance">{num(p.points)}</dd>
            <dt>Pending</dt>
            <dd>{num(p.pending_points)}</dd>
          </dl>
          {p.expiring.length ? (
            <Table
              caption="Points expiring next"
              rows={p.expiring}
              rowKey={(e) => e.expires_at}
              columns={[
                { label: 'Expires', cell: (e) => when(e.expires_at) },
                { label: 'Points', num: true, cell: (e) => num(e.points) },
              ]}
            />
          ) : (
            <p>No points expiring.</p>
          )}
        </>
      ) : null}
    </Section>
  );
}

function Tier({ member, version }: { member: Member; version: number }) {
  const load = useLoad(
    () =>
      // An organization without tiers answers 404: the member simply has none.
      ok(api().GET('/loyalty/members/{user_ref}/tier', { params: { path: { user_ref: member.user_id } } })).catch(
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 404) return null;
          throw err;
        },
      ),
    [member.user_id, version],
  );
  const t = load.data;
  const next = t?.next_tier;
  return (
    <Section title="Tier">
      <Loading load={load} />
      {t === null ? <p>The organization has no tiers.</p> : null}
      {t ? (
        <>
          <dl class="facts">
            <dt>Tier</dt>
            <dd>{t.tier ? t.tier.name : 'None'}</dd>
            <dt>Earned in window</dt>
            <dd>{num(t.earned_in_window)}</dd>
            <dt>Holds until</dt>
            <dd>{t.tier ? (t.valid_until ? when(t.valid_until) : 'For good') : '—'}</dd>
            {t.set_by_hand ? (
              <>
                <dt>Set by hand</dt>
                <dd>
                  {t.set_by_hand.reason} (until {when(t.set_by_hand.until)})
                </dd>
              </>
            ) : null}
          </dl>
          {next ? (
            <p class="progress">
              <label>
                {num(next.points_needed)} points to {next.name}
                <progress max={next.threshold} value={Math.max(0, next.threshold - next.points_needed)} />
              </label>
            </p>
          ) : (
            <p>No higher tier.</p>
          )}
        </>
      ) : null}
    </Section>
  );
}

const HISTORY_LIMIT = 10;
const REVERSIBLE = new Set(['action', 'referral', 'receipt', 'ticket_scan']);

function History({ member, version, onChanged }: { member: Member; version: number; onChanged: () => void }) {
  const [page, setPage] = useState(1);
  const load = useLoad(
    () =>
      ok(
        api().GET('/loyalty/points/{internal_user_id}/history', {
          params: { path: { internal_user_id: member.user_id }, query: { page, limit: HISTORY_LIMIT } },
        }),
      ).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }),
    [member.user_id, page, version],
  );
  const h = load.data;
  const [notice, setNotice] = useState<string | null>(null);
  // A credit reversed on this page shows no Reverse button (the platform would answer the same reversal).
  const reversed = new Set(
    (h?.entries ?? []).filter((e) => e.reason === 'reversal').map((e) => e.operation_id.replace(/^reversal:/, '')),
  );
  return (
    <Section title="Points history">
      <Loading load={load} />
      {notice ? <Notice>{notice}</Notice> : null}
      {load.data === null ? <p>No points yet.</p> : null}
      {h ? (
        <>
          <Table
            caption="Ledger entries, newest first"
            rows={h.entries}
            rowKey={(e) => e.entry_id}
            columns={[
              { label: 'When', cell: (e) => when(e.created_at) },
              { label: 'Kind', cell: (e) => e.reason },
              {
                label: 'Description',
                cell: (e) => (
                  <>
                    {e.description ?? '—'}
                    {e.note ? ` (${e.note})` : null}
                    {e.available_at && new Date(e.available_at) > new Date() ? (
                      <>
                        {' '}
                        <Badge tone="warn">pending until {when(e.available_at)}</Badge>
                      </>
                    ) : null}
                  </>
                ),
              },
              { label: 'Operation', cell: (e) => <code>{e.operation_id}</code> },
              { label: 'Points', num: true, cell: (e) => (e.amount > 0 ? `+${num(e.amount)}` : num(e.amount)) },
              { label: 'Balance after', num: true, cell: (e) => num(e.balance_after) },
              {
                label: 'Action',
                cell: (e) =>
                  REVERSIBLE.has(e.reason) && e.amount > 0 ? (
                    reversed.has(e.operation_id) ? (
                      <Badge>reversed</Badge>
                    ) : (
                      <ReverseButton member={member} entry={e} onDone={(m) => (setNotice(m), onChanged())} />
                    )
                  ) : null,
              },
            ]}
          />
          <Pager label="Points history" page={h.page} limit={h.limit} total={h.total} onPage={setPage} />
        </>
      ) : null}
    </Section>
  );
}

function Keys({ member }: { member: Member }) {
  const load = useLoad(
    () =>
      ok(api().GET('/api/session-service/list_api_keys/{user_id}', { params: { path: { user_id: member.user_id } } })),
    [member.user_id],
  );
  return (
    <Section title="API keys">
      <Loading load={load} />
      {load.data ? (
        <Table
          caption="The member's keys"
          rows={load.data.api_keys}
          rowKey={(k) => k.key_id}
          empty="No keys."
          columns={[
            { label: 'Key', cell: (k) => <code>{k.key}</code> },
            { label: 'Name', cell: (k) => k.name ?? '—' },
            { label: 'Permissions', cell: (k) => k.permissions.join(', ') || 'basic' },
            {
              label: 'Status',
              cell: (k) => <Badge tone={k.active ? 'ok' : k.status === 'revoked' ? 'bad' : 'warn'}>{k.status}</Badge>,
            },
            { label: 'Created', cell: (k) => when(k.created_at) },
            { label: 'Last used', cell: (k) => when(k.last_used) },
          ]}
        />
      ) : null}
    </Section>
  );
}

function Sessions({ member }: { member: Member }) {
  const [page, setPage] = useState(1);
  const load = useLoad(
    () =>
      ok(
        api().GET('/api/users/{user_ref}/sessions', {
          params: { path: { user_ref: member.user_id }, query: { page, limit: 10 } },
        }),
      ),
    [member.user_id, page],
  );
  const s = load.data;
  return (
    <Section title="Sessions">
      <Loading load={load} />
      {s ? (
        <>
          <Table
            caption="The member's sessions, newest first"
            rows={s.sessions}
            rowKey={(x) => x.session_id}
            empty="No sessions."
            columns={[
              { label: 'Session', cell: (x) => <code>{x.session_id}</code> },
              {
                label: 'Status',
                cell: (x) => <Badge tone={x.status === 'active' ? 'ok' : undefined}>{x.status}</Badge>,
              },
              { label: 'Source', cell: (x) => x.source },
              { label: 'Started', cell: (x) => when(x.created_at) },
              { label: 'Last activity', cell: (x) => when(x.last_activity) },
              {
                label: 'Ended',
                cell: (x) => (x.ended_at ? `${when(x.ended_at)} (${x.end_reason ?? 'ended'})` : '—'),
              },
            ]}
          />
          {s.total > s.limit ? (
            <Pager label="Sessions" page={s.page} limit={s.limit} total={s.total} onPage={setPage} />
          ) : null}
        </>
      ) : null}
    </Section>
  );
}
