/**
 * The organization's API keys (GET /api/keys, masked: never a secret): who holds them, what they
 * may do, their state and last use. Choosing one opens its panel (keys-detail.tsx): its name, its
 * usage by day, rotation and revocation.
 */
import './keys.css';

import { useState } from 'preact/hooks';

import type { components } from '../../../src/schema.ts';
import { api, ok, session } from '../api.ts';
import { Badge, Field, Loading, type PageProps, Pager, Section, Table, useLoad, when } from '../ui.tsx';
import { KeyDetail } from './keys-detail.tsx';

export type ListedKey = components['schemas']['GetKeysResponse']['api_keys'][number];

const LIMIT = 20;

/** The masked key (`pk_<prefix>…`) is the signed-in one when the secret starts with its prefix. */
export const isSignedInKey = (k: ListedKey): boolean => session().key.startsWith(k.key.replace(/…$/, ''));

const TONES: Record<ListedKey['status'], 'ok' | 'warn' | 'bad'> = {
  active: 'ok',
  expiring: 'warn',
  revoked: 'bad',
  expired: 'bad',
};

export function StatusBadge({ k }: { k: ListedKey }) {
  return <Badge tone={TONES[k.status]}>{k.status}</Badge>;
}

export function KeysPage(_props: PageProps) {
  const [user, setUser] = useState('');
  const [status, setStatus] = useState<'' | 'active' | 'revoked'>('');
  const [query, setQuery] = useState<{ user_ref?: string; status?: 'active' | 'revoked' }>({});
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<string | undefined>();
  const load = useLoad(
    () => ok(api().GET('/api/keys', { params: { query: { ...query, page, limit: LIMIT } } })),
    [query, page],
  );
  const keys = load.data?.api_keys ?? [];
  const chosen = keys.find((k) => k.key_id === selected);
  return (
    <>
      <h1>Keys</h1>
      <Section title="API keys">
        <form
          class="row"
          aria-label="Filter the keys"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ user_ref: user.trim() || undefined, status: status || undefined });
            setPage(1);
          }}
        >
          <Field label="User (user id or idp id)">
            <input value={user} onInput={(e) => setUser(e.currentTarget.value)} />
          </Field>
          <Field label="Status">
            <select value={status} onChange={(e) => setStatus(e.currentTarget.value as '' | 'active' | 'revoked')}>
              <option value="">Any</option>
              <option value="active">Not revoked</option>
              <option value="revoked">Revoked</option>
            </select>
          </Field>
          <button type="submit" class="primary">
            Filter
          </button>
        </form>
        <Loading load={load} />
        {load.data ? (
          <>
            <Table
              caption="Keys of the organization, newest first"
              rowKey={(k) => k.key_id}
              rows={keys}
              empty="No key matches."
              columns={[
                {
                  label: 'Name',
                  cell: (k) => (
                    <>
                      {k.name ?? <span class="muted">unnamed</span>}
                      {isSignedInKey(k) ? (
                        <>
                          {' '}
                          <Badge tone="warn">signed in with it</Badge>
                        </>
                      ) : null}
                    </>
                  ),
                },
                {
                  label: 'Key',
                  cell: (k) => (
                    <>
                      <code>{k.key}</code>
                      <br />
                      <code>{k.key_id}</code>
                    </>
                  ),
                },
                {
                  label: 'Owner',
                  cell: (k) => (
                    <>
                      {k.idp_id}
                      <br />
                      <code>{k.user_id}</code>
                    </>
                  ),
                },
                { label: 'Permissions', cell: (k) => k.permissions.join(', ') },
                { label: 'Status', cell: (k) => <StatusBadge k={k} /> },
                { label: 'Created', cell: (k) => when(k.created_at) },
                { label: 'Last used', cell: (k) => when(k.last_used) },
                { label: 'Expires', cell: (k) => when(k.expires_at) },
                {
                  label: 'Manage',
                  cell: (k) => (
                    <button
                      type="button"
                      aria-pressed={k.key_id === selected}
                      aria-label={`Manage ${k.name ?? k.key_id}`}
                      onClick={() => setSelected(k.key_id === selected ? undefined : k.key_id)}
                    >
                      Manage
                    </button>
                  ),
                },
              ]}
            />
            <Pager page={page} limit={LIMIT} total={load.data.total} onPage={setPage} label="Keys" />
          </>
        ) : null}
      </Section>
      {chosen ? <KeyDetail key={chosen.key_id} k={chosen} onChanged={load.reload} /> : null}
    </>
  );
}
