// Creating a dashboard (name, key, source, group) and a dashboard group.
import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { sourceLabel } from '../lib/sources';
import type { Dashboard, DashboardGroup, Source } from '../lib/types';

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
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const source = sources.find((s) => s.id === form.get('source'));
    try {
      const created = await api<Dashboard>('POST', '/dashboards', {
        name: form.get('name'),
        key: form.get('key'),
        source: source ? { type: source.type, id: source.id } : null,
        group_id: form.get('group') || null,
      });
      onCreated(created);
    } catch (err) {
      setError((err as Error).message);
    }
  };
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
          <input name="name" required maxLength={255} placeholder="Orders" />
        </label>
        <label class="field">
          Metric key
          <input name="key" required maxLength={255} placeholder="shop::orders" />
        </label>
        <label class="field">
          Source
          <select name="source" required>
            {sources.map((s) => (
              <option key={s.id} value={s.id}>
                {sourceLabel(s)}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          Group
          <select name="group">
            <option value="">No group</option>
            {groups.map((g) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
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
