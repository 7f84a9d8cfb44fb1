// Creating a dashboard (name, key, source, group) and a dashboard group.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../lib/api';
import { keyCounts } from '../lib/explore-data';
import { useLoad } from '../lib/hooks';
import { fetchSeries } from '../lib/series';
import { sourceLabel } from '../lib/sources';
import { fitGranularity } from '../lib/view';
import { FieldError } from './source-settings';

const SYSTEM_KEY = '__system__key__';
import type { Dashboard, DashboardGroup, Source } from '../lib/types';

const SUGGEST_DAYS = 30;

/** The keys a source saw over the last 30 days (from the system key, as Explore reads them). */
function useKeySuggestions(source: Source | undefined): string[] {
  const loaded = useLoad(
    (signal) => {
      if (!source) return Promise.resolve([]);
      const to = Date.now();
      const from = to - SUGGEST_DAYS * 86_400_000;
      const granularity = fitGranularity(source.granularities, null, to - from, 60);
      return fetchSeries(source.id, SYSTEM_KEY, { from, to, granularity }, signal).then(
        (system) => keyCounts(system).keys.map((k) => k.key),
        () => [],
      );
    },
    [source?.id],
  );
  return loaded.data ?? [];
}

export function NewDashboardForm({
  sources,
  groups,
  onCreated,
}: {
  sources: Source[];
  groups: DashboardGroup[];
  onCreated: (d: Dashboard) => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [sourceId, setSourceId] = useState<string | null>(null);
  const chosen = sources.find((s) => s.id === sourceId) ?? sources[0];
  const suggestions = useKeySuggestions(chosen);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const source = sources.find((s) => s.id === form.get('source'));
    setError(null);
    setErrors({});
    try {
      const created = await api<Dashboard>('POST', '/dashboards', {
        name: form.get('name'),
        key: form.get('key'),
        source: source ? { type: source.type, id: source.id } : null,
        group_id: form.get('group') || null,
      });
      onCreated(created);
    } catch (err) {
      const fields = err instanceof ApiError ? { ...err.fields } : {};
      // Fields without an input of their own (source_id, group_id) keep the API's words in the message.
      const own = ['name', 'key', 'source', 'group_id'];
      const rest = Object.entries(fields).filter(([f]) => !own.includes(f));
      setErrors(fields);
      setError(
        Object.keys(fields).length === 0
          ? (err as Error).message
          : rest.length
            ? rest.map(([f, m]) => `${f} ${m.join(', ')}`).join('; ')
            : null,
      );
    }
  };
  const hint = (field: string) => <FieldError id={`new-dashboard-${field}`} messages={errors[field]} />;
  const aria = (field: string) => ({
    'aria-invalid': errors[field] ? true : undefined,
    'aria-describedby': errors[field] ? `new-dashboard-${field}` : undefined,
  });
  return (
    <form
      class="panel panel-body stack"
      onSubmit={submit}
      style={{ flex: '2 1 420px' }}
      aria-label="New dashboard"
    >
      <h2>New dashboard</h2>
      <div class="form-grid">
        <label class="field">
          Name
          <input name="name" required maxLength={255} placeholder="Orders" {...aria('name')} />
          {hint('name')}
        </label>
        <label class="field">
          Metric key
          <input
            name="key"
            required
            maxLength={255}
            placeholder="shop::orders"
            list="new-dashboard-keys"
            autocomplete="off"
            {...aria('key')}
          />
          <datalist id="new-dashboard-keys" data-testid="key-suggestions">
            {suggestions.slice(0, 500).map((k) => (
              <option key={k} value={k} />
            ))}
          </datalist>
          {hint('key')}
        </label>
        <label class="field">
          Source
          <select
            name="source"
            required
            onChange={(e) => setSourceId((e.target as HTMLSelectElement).value)}
            {...aria('source')}
          >
            {sources.map((s) => (
              <option key={s.id} value={s.id}>
                {sourceLabel(s)}
              </option>
            ))}
          </select>
          {hint('source')}
        </label>
        <label class="field">
          Group
          <select name="group" {...aria('group_id')}>
            <option value="">No group</option>
            {groups.map((g) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
          {hint('group_id')}
        </label>
      </div>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div>
        <button class="primary" type="submit" disabled={sources.length === 0}>
          Create dashboard
        </button>
      </div>
    </form>
  );
}

export function NewGroupForm({ onCreated }: { onCreated: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    try {
      await api('POST', '/dashboard-groups', { name: new FormData(form).get('name') });
      form.reset();
      onCreated();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form
      class="panel panel-body stack"
      onSubmit={submit}
      style={{ flex: '1 1 240px' }}
      aria-label="New group"
    >
      <h2>New group</h2>
      <label class="field">
        Group name
        <input name="name" required maxLength={255} placeholder="Team" />
      </label>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit">Create group</button>
      </div>
    </form>
  );
}
