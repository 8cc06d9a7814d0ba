/**
 * The operator console: sign-in, a navigation that shows the review counts, and one page per
 * area (pages/). Routes are the URL's fragment (#/members/usr_…), so the edge serves one page.
 */
import 'uplot/dist/uPlot.min.css';
import './console.css';

import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { actIn, api, ok, resume, type Signed, signIn, signOut } from './api.ts';
import { AuditPage } from './pages/audit.tsx';
import { CampaignsPage } from './pages/campaigns.tsx';
import { KeysPage } from './pages/keys.tsx';
import { MembersPage } from './pages/members.tsx';
import { ReviewsPage } from './pages/reviews.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { CHANGED, type Counts, ErrorMessage, Field, num, useAction, useLoad } from './ui.tsx';

/** What waits for a person: the totals of the three review queues (one item asked of each). */
async function reviewCounts(): Promise<Counts> {
  const [r, s, h] = await Promise.all([
    ok(api().GET('/api/gifts/redemptions', { params: { query: { status: 'needs_review', limit: 1 } } })),
    ok(
      api().GET('/api/ticket-scan/loyalty/ticket-scan', {
        params: { query: { status: 'pending_validation', limit: 1 } },
      }),
    ),
    ok(api().GET('/api/support/handoffs', { params: { query: { status: 'open', limit: 1 } } })),
  ]);
  return { redemptions: r.total, scans: s.total, handoffs: h.total };
}

const PAGES = [
  { path: 'members', label: 'Members', Page: MembersPage },
  { path: 'reviews', label: 'Review queues', Page: ReviewsPage },
  { path: 'campaigns', label: 'Campaigns & tiers', Page: CampaignsPage },
  { path: 'webhooks', label: 'Webhooks', Page: WebhooksPage },
  { path: 'audit', label: 'Audit', Page: AuditPage },
  { path: 'keys', label: 'Keys', Page: KeysPage },
] as const;

function useRoute(): string[] {
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part; // a malformed escape (#/members/%E0) is shown as typed, not a blank page
    }
  };
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decode);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function SignIn({ onSigned }: { onSigned: (s: Signed) => void }) {
  const [key, setKey] = useState('');
  const action = useAction(async () => onSigned(await signIn(key.trim())));
  return (
    <main class="signin">
      <h1>Loyalty platform console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
        <Field label="Admin API key" hint="Kept in this tab only, and forgotten when it closes.">
          <input
            type="password"
            name="api_key"
            autocomplete="off"
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
        </Field>
        <button type="submit" class="primary" disabled={action.busy}>
          Sign in
        </button>
        <ErrorMessage error={action.error} />
      </form>
    </main>
  );
}

function OrgPicker({ signed, onChange }: { signed: Signed; onChange: (s: Signed) => void }) {
  const [org, setOrg] = useState(signed.org);
  const action = useAction(async () => {
    const id = org.trim();
    await ok(api().GET('/api/organizations/{organization_id}', { params: { path: { organization_id: id } } }));
    onChange(actIn(id));
  });
  return (
    <form
      class="org"
      onSubmit={(e) => {
        e.preventDefault();
        void action.run();
      }}
    >
      <Field label="Organization">
        <input value={org} onInput={(e) => setOrg(e.currentTarget.value)} />
      </Field>
      <button type="submit">Act in it</button>
      <ErrorMessage error={action.error} />
    </form>
  );
}

function Home({ counts }: { counts: Counts | undefined }) {
  return (
    <>
      <h1>Today</h1>
      <ul class="tiles">
        <li>
          <a href="#/reviews/redemptions">
            <strong>{num(counts?.redemptions)}</strong> redemptions to settle
          </a>
        </li>
        <li>
          <a href="#/reviews/scans">
            <strong>{num(counts?.scans)}</strong> scans to validate
          </a>
        </li>
        <li>
          <a href="#/reviews/handoffs">
            <strong>{num(counts?.handoffs)}</strong> support handoffs waiting
          </a>
        </li>
      </ul>
      <p>
        Find a member, settle what waits for review, run campaigns, watch webhook endpoints, check the audit trail and
        manage API keys from the navigation.
      </p>
    </>
  );
}

function Console({ signed, onSigned }: { signed: Signed; onSigned: (s: Signed | null) => void }) {
  const route = useRoute();
  const counts = useLoad(reviewCounts, [signed.org, route.join('/')]);
  useEffect(() => {
    addEventListener(CHANGED, counts.reload);
    return () => removeEventListener(CHANGED, counts.reload);
  }, [counts.reload]);
  const page = PAGES.find((p) => p.path === route[0]);
  const waiting = counts.data ? counts.data.redemptions + counts.data.scans + counts.data.handoffs : undefined;
  useEffect(() => {
    document.title = `${page?.label ?? 'Today'} · Console`;
    document.getElementById('main')?.focus();
  }, [page?.path]);
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">
          Console
        </a>
        <span class="who">
          Organization <code>{signed.org}</code>
        </span>
        {signed.system ? <OrgPicker signed={signed} onChange={onSigned} /> : null}
        <button type="button" onClick={() => (signOut(), onSigned(null))}>
          Sign out
        </button>
      </header>
      <nav class="side" aria-label="Console">
        <ul>
          <li>
            <a href="#/" aria-current={!page ? 'page' : undefined}>
              Today
            </a>
          </li>
          {PAGES.map((p) => (
            <li>
              <a href={`#/${p.path}`} aria-current={page?.path === p.path ? 'page' : undefined}>
                {p.label}
                {p.path === 'reviews' && waiting ? (
                  <span class="count" aria-label={`${waiting} waiting`}>
                    {waiting}
                  </span>
                ) : null}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {page ? <page.Page route={route.slice(1)} counts={counts.data} /> : <Home counts={counts.data} />}
      </main>
    </div>
  );
}

function App() {
  const [signed, setSigned] = useState<Signed | null | undefined>(undefined);
  const [failed, setFailed] = useState<Error | undefined>();
  useEffect(() => {
    resume().then(setSigned, setFailed);
  }, []);
  if (failed)
    return (
      <main class="signin">
        <h1>Loyalty platform console</h1>
        <ErrorMessage error={failed} />
        <button type="button" onClick={() => location.reload()}>
          Try again
        </button>
      </main>
    );
  if (signed === undefined) return <p aria-busy="true">Loading…</p>;
  if (!signed) return <SignIn onSigned={setSigned} />;
  return <Console key={signed.org} signed={signed} onSigned={setSigned} />;
}

render(<App />, document.getElementById('app')!);
