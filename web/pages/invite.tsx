// Accepting an invitation link (/invite#svc_inv_…, docs/members.md). The token rides after '#', so
// it never reaches the server's logs; the page keeps it in this tab's sessionStorage while the person
// signs in or creates an account, then joins the organization with it.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, get } from '../lib/api';
import { useFormSubmit, useTitle } from '../lib/hooks';
import { navigate } from '../lib/router';
import type { Account } from '../lib/types';

const KEY = 'invite-token';

function inviteToken(): string | null {
  const fromHash = /^#(svc_inv_[A-Za-z0-9_-]{43})$/.exec(location.hash)?.[1];
  if (fromHash) {
    sessionStorage.setItem(KEY, fromHash);
    history.replaceState(null, '', '/invite');
    return fromHash;
  }
  return sessionStorage.getItem(KEY);
}

interface Preview {
  organization: { id: string; name: string };
  role: string;
  expires_at: string;
}

type State =
  | { step: 'loading' }
  | { step: 'invalid' }
  | { step: 'ready'; preview: Preview; account: Account | null }
  | { step: 'error'; message: string };

const ROLE_TEXT: Record<string, string> = {
  admin: 'an admin (sources, tokens, members, dashboards and monitors)',
  editor: 'an editor (dashboards, share links, monitors)',
  viewer: 'a viewer (reads everything, changes nothing)',
};

export function InvitePage() {
  useTitle('Invitation');
  const [state, setState] = useState<State>({ step: 'loading' });
  const [mode, setMode] = useState<'signup' | 'signin'>('signup');
  const token = inviteToken();

  const load = async () => {
    if (!token) return setState({ step: 'invalid' });
    try {
      const preview = await api<Preview>('POST', '/invitations/preview', { token });
      const account = await get<Account | null>('/session?optional=1').catch(() => null);
      setState({ step: 'ready', preview, account });
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) setState({ step: 'invalid' });
      else setState({ step: 'error', message: (err as Error).message });
    }
  };
  useEffect(() => void load(), []);

  const join = async () => {
    await api('POST', '/invitations/accept', { token });
    sessionStorage.removeItem(KEY);
    // A full load: the shell reads the account (now with its organization and role) afresh.
    location.assign('/');
  };

  const joinForm = useFormSubmit(async () => join());
  const accountForm = useFormSubmit(async (form) => {
    const email = String(form.get('email'));
    const password = String(form.get('password'));
    if (mode === 'signup') {
      const name = String(form.get('name') ?? '').trim();
      const created = await api<{ token: { value: string } }>('POST', '/bootstrap/signup', {
        email,
        password,
        ...(name ? { name } : {}),
      });
      await api('POST', '/session', undefined, { token: created.token.value });
      await api('DELETE', '/session', undefined, { token: created.token.value });
    } else {
      await api('POST', '/session', { email, password });
    }
    await join();
  });

  if (state.step === 'loading')
    return (
      <main class="auth" aria-busy="true">
        <div class="skeleton" style={{ height: '32px', maxWidth: '320px' }} />
      </main>
    );
  if (state.step === 'invalid' || state.step === 'error')
    return (
      <main class="auth">
        <p class="brand auth-brand">Metrics</p>
        <div class="panel panel-body stack">
          <h1>Invitation</h1>
          <p role="alert" class={state.step === 'error' ? 'error-text' : ''}>
            {state.step === 'error'
              ? state.message
              : 'This invitation link cannot be used: it was used already, revoked, or it expired. Ask for a new one.'}
          </p>
          <button type="button" onClick={() => navigate('/')}>
            Go to the dashboards
          </button>
        </div>
      </main>
    );

  const { preview, account } = state;
  const expires = new Date(preview.expires_at).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short',
  });
  return (
    <main class="auth">
      <p class="brand auth-brand">Metrics</p>
      <div class="panel panel-body stack">
        <h1>Join {preview.organization.name}</h1>
        <p>
          You are invited as {ROLE_TEXT[preview.role] ?? preview.role}. The link works once, until {expires}.
        </p>
        {account ? (
          account.organization ? (
            <p role="alert" class="error-text">
              You are signed in as {account.user.email}, who already belongs to {account.organization.name}. A
              person belongs to one organization: sign out and use another account to join.
            </p>
          ) : (
            <form onSubmit={joinForm.submit} class="stack">
              <p>Signed in as {account.user.email}.</p>
              {joinForm.error && (
                <p class="error-text" role="alert">
                  {joinForm.error}
                </p>
              )}
              <button class="primary" type="submit" disabled={joinForm.busy}>
                Join {preview.organization.name}
              </button>
            </form>
          )
        ) : (
          <form onSubmit={accountForm.submit} class="stack">
            <div class="row" role="group" aria-label="Account">
              <button type="button" aria-pressed={mode === 'signup'} onClick={() => setMode('signup')}>
                New account
              </button>
              <button type="button" aria-pressed={mode === 'signin'} onClick={() => setMode('signin')}>
                I have an account
              </button>
            </div>
            {mode === 'signup' && (
              <label class="field">
                Name (optional)
                <input name="name" autocomplete="name" maxLength={255} />
              </label>
            )}
            <label class="field">
              E-mail
              <input name="email" type="email" required autocomplete="username" />
            </label>
            <label class="field">
              Password
              <input
                name="password"
                type="password"
                required
                minLength={mode === 'signup' ? 8 : undefined}
                autocomplete={mode === 'signup' ? 'new-password' : 'current-password'}
              />
            </label>
            {accountForm.error && (
              <p class="error-text" role="alert">
                {accountForm.error}
              </p>
            )}
            <button class="primary" type="submit" disabled={accountForm.busy}>
              {mode === 'signup' ? 'Create account and join' : 'Sign in and join'}
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
