/**
 * Members: find a member (GET /api/users, server-side and paged) and open their page
 * (#/members/<user_id>, members-detail.tsx).
 */
import './members.css';

import { useState } from 'preact/hooks';

import { api, ok } from '../api.ts';
import { Field, Loading, type PageProps, Pager, Section, Table, useLoad, when } from '../ui.tsx';
import { MemberDetail } from './members-detail.tsx';

const LIMIT = 20;

/** The last search, so coming back from a member's page shows the same list. */
let last = { q: '', page: 1 };

export function MembersPage({ route }: PageProps) {
  if (route[0]) return <MemberDetail userRef={route[0]} />;
  return <MemberSearch />;
}

function MemberSearch() {
  const [text, setText] = useState(last.q);
  const [search, setSearch] = useState(last);
  last = search;
  const load = useLoad(
    () =>
      ok(
        api().GET('/api/users', {
          params: { query: { q: search.q || undefined, page: search.page, limit: LIMIT } },
        }),
      ),
    [search.q, search.page],
  );
  const data = load.data;
  return (
    <>
      <h1>Members</h1>
      <form
        class="row"
        role="search"
        aria-label="Members"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch({ q: text.trim(), page: 1 });
        }}
      >
        <Field label="Find a member" hint="A user id (usr_…), or the start of an idp_id or of an email address.">
          <input type="search" name="q" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </Field>
        <div class="actions field">
          <button type="submit" class="primary">
            Search
          </button>
          {search.q ? (
            <button type="button" onClick={() => (setText(''), setSearch({ q: '', page: 1 }))}>
              Show all
            </button>
          ) : null}
        </div>
      </form>
      <Section title={search.q ? `Members matching “${search.q}”` : 'Newest members'}>
        <Loading load={load} />
        {data ? (
          <>
            <Table
              caption={search.q ? `Members matching ${search.q}` : 'Newest members first'}
              rows={data.users}
              rowKey={(u) => u.user_id}
              empty={search.q ? 'No member matches this search.' : 'No members yet.'}
              columns={[
                {
                  label: 'Member',
                  cell: (u) => <a href={`#/members/${encodeURIComponent(u.user_id)}`}>{u.display_name ?? u.idp_id}</a>,
                },
                { label: 'idp_id', cell: (u) => <code>{u.idp_id}</code> },
                { label: 'Email', cell: (u) => u.email ?? '—' },
                { label: 'User id', cell: (u) => <code>{u.user_id}</code> },
                { label: 'Joined', cell: (u) => when(u.created_at) },
              ]}
            />
            <Pager
              label="Members"
              page={data.page}
              limit={data.limit}
              total={data.total}
              onPage={(page) => setSearch({ ...search, page })}
            />
          </>
        ) : null}
      </Section>
    </>
  );
}
