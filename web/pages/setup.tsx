// First run (no user yet, registration open): create the first account and its organization, then
// open a session with the signup's token (POST /session with it as a bearer token: the cookie then
// holds a session credential of its own) and revoke that token (DELETE /session with it), so no API
// token outlives the form.
import { api } from '../lib/api';
import { useFormSubmit, useTitle } from '../lib/hooks';

export function SetupPage({ onDone }: { onDone: () => void }) {
  useTitle('Welcome');
  const { submit, error, busy } = useFormSubmit(async (form) => {
    const body = {
      email: String(form.get('email')),
      password: String(form.get('password')),
      name: String(form.get('name') || '') || undefined,
      organization_name: String(form.get('organization')),
      token_name: 'Web session',
    };
    const created = await api<{ token: { value: string } }>('POST', '/bootstrap/signup', body);
    await api('POST', '/session', undefined, { token: created.token.value });
    await api('DELETE', '/session', undefined, { token: created.token.value });
    onDone();
  });
  return (
    <main class="auth">
      <p class="brand auth-brand">Metrics</p>
      <form class="panel panel-body" onSubmit={submit}>
        <div>
          <h1>Welcome</h1>
          <p class="muted">
            Create the first account and its organization. You can invite nobody yet; everything stays on this
            machine.
          </p>
        </div>
        <label class="field">
          Organization
          <input
            name="organization"
            required
            maxLength={255}
            placeholder="Acme"
            autocomplete="organization"
          />
        </label>
        <label class="field">
          Your name (optional)
          <input name="name" maxLength={255} autocomplete="name" />
        </label>
        <label class="field">
          E-mail
          <input name="email" type="email" required autocomplete="username" />
        </label>
        <label class="field">
          Password (at least 8 characters)
          <input
            name="password"
            type="password"
            required
            minLength={8}
            maxLength={256}
            autocomplete="new-password"
          />
        </label>
        {error && (
          <p class="error-text" role="alert">
            {error}
          </p>
        )}
        <button class="primary" type="submit" disabled={busy}>
          Create account
        </button>
      </form>
    </main>
  );
}
