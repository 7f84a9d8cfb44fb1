// Sign-in through the API's own login (POST /api/v1/session: same checks and throttle); the server
// sets an HttpOnly cookie, so the page never holds a token.
import { api } from '../lib/api';
import { useFormSubmit, useTitle } from '../lib/hooks';

export function SignInPage({ onDone }: { onDone: () => void }) {
  useTitle('Sign in');
  const { submit, error, busy } = useFormSubmit(async (form) => {
    await api('POST', '/session', {
      email: String(form.get('email')),
      password: String(form.get('password')),
    });
    onDone();
  });
  return (
    <main class="auth">
      <p class="brand auth-brand">Metrics</p>
      <form class="panel panel-body" onSubmit={submit}>
        <h1>Sign in</h1>
        <label class="field">
          E-mail
          <input name="email" type="email" required autocomplete="username" />
        </label>
        <label class="field">
          Password
          <input name="password" type="password" required autocomplete="current-password" />
        </label>
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
        <button class="primary" type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
