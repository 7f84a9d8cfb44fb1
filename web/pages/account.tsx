// Account: who you are, your organization (create one if the account has none), theme, sign out.
import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { useSession, useTitle } from '../lib/hooks';
import { setThemeChoice, useTheme, type ThemeChoice } from '../lib/theme';

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
      <select name="theme" value={choice} onChange={(e) => setThemeChoice((e.target as HTMLSelectElement).value as ThemeChoice)}>
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
      {error && <span class="error-text" role="alert">{error}</span>}
    </form>
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
        <section class="panel">
          <header>
            <h2>Appearance</h2>
          </header>
          <div class="panel-body">
            <ThemeSelect />
            <p class="muted">System follows your operating system's light or dark setting. The choice is kept in this browser.</p>
          </div>
        </section>
      </div>
    </main>
  );
}
