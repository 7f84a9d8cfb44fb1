// The shell: who is signed in (the session cookie, read through GET /api/v1/session), first run,
// the header, and which page a path shows.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, get, SESSION_EXPIRED } from './lib/api';
import { SessionContext, type SessionValue } from './lib/hooks';
import { Link, navigate, useLocation, withQuery } from './lib/router';
import { ThemeSelect } from './pages/account';
import type { Account } from './lib/types';
import { SetupPage } from './pages/setup';
import { SignInPage } from './pages/signin';
import { DashboardsPage } from './pages/dashboards';
import { DashboardPage } from './pages/dashboard';
import { ExplorePage } from './pages/explore';
import { SourcesPage } from './pages/sources';
import { AccountPage } from './pages/account';
import { SharedDashboardPage } from './pages/shared';
import { MonitorsPage } from './pages/monitors';
import { MonitorPage } from './pages/monitor';
import { ChannelsPage } from './pages/channels';
import { InvitePage } from './pages/invite';
import { safeNext } from './lib/next';

type Auth =
  | { status: 'loading' }
  | { status: 'setup' }
  | { status: 'signed-out' }
  | { status: 'signed-in'; account: Account }
  | { status: 'error'; message: string };

/** The first-run state and the session, read side by side (one round trip, not two). */
async function readAuth(): Promise<Auth> {
  // ?optional=1: no session is 200 {data: null}, not a 401 the browser logs on the landing page.
  const session = get<Account | null>('/session?optional=1').then(
    (account): Auth => (account ? { status: 'signed-in', account } : { status: 'signed-out' }),
    (err: unknown): Auth => {
      if (err instanceof ApiError && err.status === 401) return { status: 'signed-out' };
      throw err;
    },
  );
  session.catch(() => undefined);
  const setup = await get<{ needs_setup: boolean }>('/bootstrap/setup-state');
  if (setup.needs_setup) return { status: 'setup' };
  return session;
}

const NAV = [
  ['/', 'Dashboards'],
  ['/monitors', 'Monitors'],
  ['/explore', 'Explore'],
  ['/sources', 'Sources'],
  ['/account', 'Account'],
] as const;

function Header({ path }: { path: string }) {
  const section = (href: string) =>
    href === '/'
      ? path === '/' || path.startsWith('/d/')
      : href === '/monitors'
        ? path.startsWith('/monitors') || path === '/channels'
        : path.startsWith(href);
  return (
    <header class="topbar">
      <Link href="/" class="brand">
        Metrics
      </Link>
      <nav aria-label="Main">
        {NAV.map(([href, label]) => (
          <Link key={href} href={href} aria-current={section(href) ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      <div class="tools">
        <ThemeSelect compact />
      </div>
    </header>
  );
}

function Page({ path }: { path: string }) {
  const dashboard = /^\/d\/([^/]+)$/.exec(path);
  if (dashboard) return <DashboardPage id={decodeURIComponent(dashboard[1]!)} />;
  if (path === '/') return <DashboardsPage />;
  if (path === '/monitors') return <MonitorsPage />;
  if (path === '/channels') return <ChannelsPage />;
  const monitor = /^\/monitors\/([^/]+)$/.exec(path);
  if (monitor) return <MonitorPage id={decodeURIComponent(monitor[1]!)} />;
  if (path === '/explore') return <ExplorePage />;
  if (path === '/sources') return <SourcesPage />;
  if (path === '/account') return <AccountPage />;
  return (
    <main>
      <div class="notice">
        No page at <code>{path}</code>. <Link href="/">Back to the dashboards</Link>
      </div>
    </main>
  );
}

export function App() {
  const loc = useLocation();
  const kiosk = loc.query.has('kiosk');
  useEffect(() => void document.body.classList.toggle('kiosk', kiosk), [kiosk]);
  useEffect(() => {
    if (!kiosk) return;
    // Escape leaves kiosk mode (the same view with its controls).
    const leave = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      const query = new URLSearchParams(location.search);
      query.delete('kiosk');
      navigate(withQuery(location.pathname, Object.fromEntries(query)));
    };
    addEventListener('keydown', leave);
    return () => removeEventListener('keydown', leave);
  }, [kiosk]);
  const shared = /^\/s\/([A-Za-z0-9_-]+)$/.exec(loc.path);
  if (shared) return <SharedDashboardPage token={shared[1]!} />;
  if (loc.path === '/invite') return <InvitePage />;
  return <SignedInApp />;
}

function SignedInApp() {
  const loc = useLocation();
  const [auth, setAuth] = useState<Auth>({ status: 'loading' });
  const load = () =>
    readAuth().then(setAuth, (err: Error) => setAuth({ status: 'error', message: err.message }));
  useEffect(() => void load(), []);
  useEffect(() => {
    const expired = () => setAuth({ status: 'signed-out' });
    addEventListener(SESSION_EXPIRED, expired);
    return () => removeEventListener(SESSION_EXPIRED, expired);
  }, []);
  const kiosk = loc.query.has('kiosk');

  // Where a signed-out or first-run visitor must go, and back once signed in.
  const target =
    auth.status === 'setup' && loc.path !== '/setup'
      ? '/setup'
      : auth.status === 'signed-out' && loc.path !== '/signin'
        ? withQuery('/signin', {
            next: loc.path === '/' || loc.path === '/setup' ? null : loc.path + location.search,
          })
        : auth.status === 'signed-in' && (loc.path === '/signin' || loc.path === '/setup')
          ? safeNext(loc.query.get('next'))
          : null;
  useEffect(() => {
    if (target) navigate(target, { replace: true, force: true });
  }, [target]);

  if (auth.status === 'loading' || target)
    return (
      <main aria-busy="true">
        <div class="skeleton" style={{ height: '32px', maxWidth: '320px' }} />
      </main>
    );
  if (auth.status === 'error')
    return (
      <main>
        <div class="notice error" role="alert">
          {auth.message}
        </div>
      </main>
    );
  if (auth.status === 'setup') return <SetupPage onDone={load} />;
  if (auth.status === 'signed-out') return <SignInPage onDone={load} />;

  const session: SessionValue = {
    account: auth.account,
    refresh: load,
    async signOut() {
      await api('DELETE', '/session').catch(() => undefined);
      setAuth({ status: 'signed-out' });
      navigate('/signin');
    },
  };
  return (
    <SessionContext.Provider value={session}>
      {!kiosk && <Header path={loc.path} />}
      <Page path={loc.path} />
    </SessionContext.Provider>
  );
}
