// Account: who you are, your organization (create one if the account has none), your signed-in
// members and invitation links (web/pages/members.tsx), your signed-in
// sessions (each revocable; GET and DELETE /api/v1/session/sessions), theme, sign out.
import { useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { useLoad, useSession, useTitle } from '../lib/hooks';
import { ConfirmButton, ErrorNotice, Skeleton } from '../components';
import { setThemeChoice, useTheme, type ThemeChoice } from '../lib/theme';
import { MembersPanel } from './members';

const THEMES: [ThemeChoice, string][] = [
  ['system', 'System'],
  ['light', 'Light'],
  ['dark', 'Dark'],
];

/** The theme picker (header and account page). */
export function ThemeSelect({ compact = false }: { compact?: boolean }) {
  const [choice] = useTheme();
  return (
    <label class={compact ? '' : 'field'}>
      <span class={compact ? 'visually-hidden' : ''}>Theme</span>
      <select
        name="theme"
        value={choice}
        onChange={(e) => setThemeChoice((e.target as HTMLSelectElement).value as ThemeChoice)}
      >
        {THEMES.map(([value, label]) => (
          <option key={value} value={value}>
            {compact ? `${label} theme` : label}
          </option>
        ))}
      </select>
    </label>
  );
}

function CreateOrganization() {
  const { refresh } = useSession();
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const name = String(new FormData(e.target as HTMLFormElement).get('name'));
    try {
      await api('POST', '/bootstrap/organizations', { name });
      refresh();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="row" onSubmit={submit}>
      <label class="field">
        Organization name
        <input name="name" required maxLength={255} />
      </label>
      <button class="primary" type="submit">
        Create organization
      </button>
      {error && (
        <span class="error-text" role="alert">
          {error}
        </span>
      )}
    </form>
  );
}

interface SessionInfo {
  id: string;
  current: boolean;
  user_agent: string | null;
  address: string | null;
  inserted_at: string;
  last_seen_at: string;
  expires_at: string;
}

const when = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A short name for a browser from its user agent ("Firefox on Linux"), or the raw text. */
function browserName(agent: string | null): string {
  if (!agent) return 'Unknown browser';
  const browser = /Edg\//.test(agent)
    ? 'Edge'
    : /Firefox\//.test(agent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(agent)
        ? 'Chrome'
        : /Safari\//.test(agent)
          ? 'Safari'
          : null;
  const system = /Android/.test(agent)
    ? 'Android'
    : /iPhone|iPad/.test(agent)
      ? 'iOS'
      : /Windows/.test(agent)
        ? 'Windows'
        : /Mac OS X/.test(agent)
          ? 'macOS'
          : /Linux/.test(agent)
            ? 'Linux'
            : null;
  return browser ? (system ? `${browser} on ${system}` : browser) : agent.slice(0, 60);
}

/** The user's signed-in sessions: this one first; any other can be ended from here. */
function Sessions() {
  const sessions = useLoad((signal) => get<SessionInfo[]>('/session/sessions', { signal }), []);
  const [error, setError] = useState<string | null>(null);
  const revoke = async (id: string) => {
    try {
      await api('DELETE', `/session/sessions/${id}`);
      setError(null);
      sessions.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const rows = [...(sessions.data ?? [])].sort((a, b) => Number(b.current) - Number(a.current));
  return (
    <section class="panel" aria-labelledby="sessions-title">
      <header>
        <h2 id="sessions-title">Sessions</h2>
      </header>
      <div class="panel-body stack">
        <p class="muted">
          Browsers signed in to this account. A session ends after a week unused or a month after sign-in; end
          one here if you no longer use that browser.
        </p>
        <ErrorNotice message={sessions.error ?? error} />
        {sessions.loading && !sessions.data ? (
          <Skeleton lines={2} />
        ) : (
          <ul class="list" aria-label="Signed-in sessions">
            {rows.map((s) => (
              <li key={s.id} data-testid="session">
                <span class="stack" style={{ gap: '2px' }}>
                  <span>
                    <span class="name">{browserName(s.user_agent)}</span>{' '}
                    {s.current && <span class="badge">this browser</span>}
                  </span>
                  <span class="meta">
                    {s.address ? `${s.address} · ` : ''}signed in {when(s.inserted_at)} · last used{' '}
                    {when(s.last_seen_at)} · ends {when(s.expires_at)}
                  </span>
                </span>
                <span class="actions">
                  {s.current ? (
                    <span class="meta">Sign out above to end it</span>
                  ) : (
                    <ConfirmButton label="End session" confirm="End it" onConfirm={() => void revoke(s.id)} />
                  )}
                </span>
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

export function AccountPage() {
  useTitle('Account');
  const { account, signOut } = useSession();
  const { user, organization, membership } = account;
  return (
    <main>
      <div class="page-head">
        <h1>Account</h1>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </div>
      <div class="stack" style={{ maxWidth: '640px' }}>
        <section class="panel">
          <header>
            <h2>You</h2>
          </header>
          <table class="data">
            <tbody>
              <tr>
                <th scope="row">E-mail</th>
                <td data-testid="account-email">{user.email}</td>
              </tr>
              <tr>
                <th scope="row">Name</th>
                <td>{user.name ?? '—'}</td>
              </tr>
              <tr>
                <th scope="row">Organization</th>
                <td>{organization ? `${organization.name} (${organization.slug})` : '—'}</td>
              </tr>
              <tr>
                <th scope="row">Role</th>
                <td>{membership?.role ?? '—'}</td>
              </tr>
            </tbody>
          </table>
          {!organization && (
            <div class="panel-body">
              <CreateOrganization />
            </div>
          )}
        </section>
        {organization && <MembersPanel />}
        <Sessions />
        <section class="panel">
          <header>
            <h2>Appearance</h2>
          </header>
          <div class="panel-body">
            <ThemeSelect />
            <p class="muted">
              System follows your operating system's light or dark setting. The choice is kept in this
              browser.
            </p>
          </div>
        </section>
      </div>
    </main>
  );
}
