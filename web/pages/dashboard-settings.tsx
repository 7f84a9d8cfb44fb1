// A dashboard's own fields: name, key, default range and granularity, locking. Saved with one PUT;
// the server's 422 messages are shown under their fields.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../lib/api';
import type { Dashboard, Source } from '../lib/types';

const FIELDS = ['name', 'key', 'default_timeframe', 'default_granularity'] as const;

export function DashboardSettings({
  dashboard,
  source,
  onSaved,
  onCancel,
}: {
  dashboard: Dashboard;
  source: Source;
  onSaved: (d: Dashboard) => void;
  onCancel: () => void;
}) {
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [message, setMessage] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const body: Record<string, unknown> = Object.fromEntries(
      FIELDS.map((f) => [f, String(form.get(f) ?? '')]),
    );
    body.locked = form.get('locked') === 'on';
    // Saved from the version loaded: a change saved elsewhere meanwhile is refused (409), not lost.
    if (dashboard.updated_at) body.updated_at = dashboard.updated_at;
    try {
      onSaved(await api<Dashboard>('PUT', `/dashboards/${dashboard.id}`, body));
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {};
      setErrors(fields);
      setMessage(Object.keys(fields).length ? null : (err as Error).message);
    }
  };
  const hint = (field: string) =>
    errors[field] ? (
      <span class="error-text" role="alert" data-error-for={field}>
        {errors[field]!.join(', ')}
      </span>
    ) : null;
  return (
    <form class="stack" onSubmit={submit} aria-label="Dashboard settings">
      <h2>Dashboard settings</h2>
      <label class="field">
        Name
        <input name="name" value={dashboard.name} required maxLength={255} aria-invalid={!!errors.name} />
        {hint('name')}
      </label>
      <label class="field">
        Metric key (named groups such as <code>(?&lt;country&gt;[^:]+)</code> are filled by segments)
        <input name="key" value={dashboard.key} required maxLength={255} aria-invalid={!!errors.key} />
        {hint('key')}
      </label>
      <div class="form-grid">
        <label class="field">
          Default range
          <input
            name="default_timeframe"
            value={dashboard.default_timeframe}
            aria-invalid={!!errors.default_timeframe}
          />
          {hint('default_timeframe')}
        </label>
        <label class="field">
          Default granularity
          <select name="default_granularity" value={dashboard.default_granularity}>
            {source.granularities.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
          {hint('default_granularity')}
        </label>
      </div>
      <label>
        <input type="checkbox" name="locked" defaultChecked={dashboard.locked} /> Locked (read-only until
        unlocked through the API)
      </label>
      {message && (
        <p class="error-text" role="alert">
          {message}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary">
          Save settings
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
