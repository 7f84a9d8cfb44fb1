// A source's settings on the Sources page: edit its name, time zone (a project's, while it holds no
// data), granularities, retention and dashboard defaults; delete it after a confirmation that names
// what goes with it (stored metric keys, tokens, dashboards, transponders). Admins only: the API
// refuses everyone else (docs/bootstrap.md#editing-and-removing-sources).
import { useState } from 'preact/hooks';
import { api, ApiError, get } from '../lib/api';
import type { Source } from '../lib/types';
import { useRole } from './members';

interface Dependents {
  dashboards: Array<{ id: string; name: string }>;
  source_tokens: number;
  transponders: number;
  metric_keys: number;
  monitors?: number;
}

let zones: string[] | null = null;
/** Every IANA zone the browser knows, UTC first (Chromium leaves it out of the list). */
export function timeZones(): string[] {
  if (!zones) {
    const supported = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf;
    const list = supported ? supported('timeZone') : [];
    zones = ['UTC', ...list.filter((z) => z !== 'UTC')];
  }
  return zones;
}

/** One field's server messages, next to the field (the id ties it to the input's aria-describedby). */
export function FieldError({ id, messages }: { id: string; messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <span class="error-text" id={id} role="alert" data-error-for={id}>
      {messages.join(', ')}
    </span>
  );
}

/**
 * The time zone as a searchable list (typing filters the browser's IANA zones); uncontrolled, so
 * a failed submit keeps what was chosen.
 */
export function ZoneInput({
  name = 'time_zone',
  defaultValue,
  disabled,
  invalid,
  describedBy,
  listId,
}: {
  name?: string;
  defaultValue: string;
  disabled?: boolean;
  invalid?: boolean;
  describedBy?: string;
  listId: string;
}) {
  return (
    <>
      <input
        name={name}
        list={listId}
        defaultValue={defaultValue}
        disabled={disabled}
        autocomplete="off"
        spellcheck={false}
        aria-invalid={invalid || undefined}
        aria-describedby={describedBy}
      />
      <datalist id={listId}>
        {timeZones().map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
    </>
  );
}

const DAY = 86_400;
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/** What a deletion takes with it, in words. */
export function describeDependents(d: Dependents, type: Source['type']): string[] {
  const lines: string[] = [];
  if (type === 'project') lines.push(`its stored metrics: ${plural(d.metric_keys, 'metric key')}`);
  lines.push(plural(d.source_tokens, 'source token'));
  lines.push(
    d.dashboards.length === 0
      ? 'no dashboards'
      : `${plural(d.dashboards.length, 'dashboard')}: ${d.dashboards.map((x) => x.name).join(', ')}`,
  );
  lines.push(plural(d.transponders, 'transponder'));
  if (d.monitors)
    lines.push(`${plural(d.monitors, 'monitor')} stay, and fail until pointed at another source`);
  return lines;
}

function SettingsForm({
  source,
  dependents,
  onSaved,
}: {
  source: Source;
  dependents: Dependents | null;
  onSaved: () => void;
}) {
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [message, setMessage] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const project = source.type === 'project';
  // A project's zone decides which bucket each stored point is in: fixed once it holds data.
  const zoneFixed = !project || (dependents?.metric_keys ?? 1) > 0;
  const prefix = `src-${source.id.slice(0, 8)}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const value = (name: string) => String(form.get(name) ?? '').trim();
    const body: Record<string, unknown> = {
      default_timeframe: value('default_timeframe'),
      default_granularity: value('default_granularity'),
    };
    if (project) {
      body.name = value('name');
      body.granularities = value('granularities');
      const days = value('expire_days');
      body.expire_after = days === '' ? null : /^\d+$/.test(days) ? Number(days) * DAY : days;
      if (!zoneFixed) body.time_zone = value('time_zone');
    } else {
      body.display_name = value('name');
    }
    setSaved(false);
    try {
      await api('PATCH', `/bootstrap/${project ? 'projects' : 'databases'}/${source.id}`, body);
      setErrors({});
      setMessage(null);
      setSaved(true);
      onSaved();
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {};
      // The form's names for the API's: display_name is the Name field, expire_after the days.
      if (fields.display_name) fields.name = fields.display_name;
      if (fields.expire_after) fields.expire_days = fields.expire_after;
      setErrors(fields);
      setMessage(Object.keys(fields).length ? null : (err as Error).message);
    }
  };
  const id = (field: string) => `${prefix}-${field}-error`;
  const describe = (field: string) => (errors[field] ? id(field) : undefined);
  return (
    <form class="stack" onSubmit={submit} aria-label={`Settings of ${source.display_name}`}>
      <div class="form-grid">
        <label class="field wide">
          Name
          <input
            name="name"
            defaultValue={source.display_name}
            required
            maxLength={255}
            aria-invalid={!!errors.name || undefined}
            aria-describedby={describe('name')}
          />
          <FieldError id={id('name')} messages={errors.name} />
        </label>
        <label class="field">
          Time zone
          <ZoneInput
            listId={`${prefix}-zones`}
            defaultValue={source.time_zone}
            disabled={zoneFixed}
            invalid={!!errors.time_zone}
            describedBy={describe('time_zone') ?? `${prefix}-zone-hint`}
          />
          <span class="muted" id={`${prefix}-zone-hint`}>
            {!project
              ? "Part of the database's layout"
              : zoneFixed
                ? 'Fixed: the project holds data'
                : 'Can change until the first point'}
          </span>
          <FieldError id={id('time_zone')} messages={errors.time_zone} />
        </label>
        <label class="field">
          Granularities
          <input
            name="granularities"
            defaultValue={source.granularities.join(',')}
            disabled={!project}
            aria-invalid={!!errors.granularities || undefined}
            aria-describedby={describe('granularities')}
          />
          <FieldError id={id('granularities')} messages={errors.granularities} />
        </label>
        <label class="field">
          Default range
          <input
            name="default_timeframe"
            defaultValue={source.default_timeframe}
            aria-invalid={!!errors.default_timeframe || undefined}
            aria-describedby={describe('default_timeframe')}
          />
          <FieldError id={id('default_timeframe')} messages={errors.default_timeframe} />
        </label>
        <label class="field">
          Default granularity
          <input
            name="default_granularity"
            defaultValue={source.default_granularity}
            aria-invalid={!!errors.default_granularity || undefined}
            aria-describedby={describe('default_granularity')}
          />
          <FieldError id={id('default_granularity')} messages={errors.default_granularity} />
        </label>
        {project && (
          <label class="field">
            Keep data for (days, empty: forever)
            <input
              name="expire_days"
              inputMode="numeric"
              defaultValue={source.expire_after ? String(Math.round(source.expire_after / DAY)) : ''}
              aria-invalid={!!errors.expire_days || undefined}
              aria-describedby={describe('expire_days')}
            />
            <FieldError id={id('expire_days')} messages={errors.expire_days} />
          </label>
        )}
      </div>
      <FieldError id={id('retention')} messages={errors.retention} />
      {message && (
        <p class="error-text" role="alert">
          {message}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary">
          Save settings
        </button>
        {saved && <span role="status">Saved.</span>}
      </div>
    </form>
  );
}

function DeleteSource({
  source,
  dependents,
  onDeleted,
}: {
  source: Source;
  dependents: Dependents | null;
  onDeleted: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      await api('DELETE', `/bootstrap/${source.type === 'project' ? 'projects' : 'databases'}/${source.id}`);
      onDeleted();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  if (!asking) {
    return (
      <div>
        <button type="button" class="danger" onClick={() => setAsking(true)}>
          Delete source…
        </button>
      </div>
    );
  }
  return (
    <div class="notice error stack" role="group" aria-label={`Delete ${source.display_name}`}>
      <strong class="clip-text">Delete “{source.display_name}” and everything on it?</strong>
      {dependents ? (
        <ul data-testid="delete-dependents">
          {describeDependents(dependents, source.type).map((line) => (
            <li key={line} class="clip-text">
              {line}
            </li>
          ))}
        </ul>
      ) : (
        <span class="muted">Counting what goes with it…</span>
      )}
      {source.type === 'database' && (
        <span class="muted">The database itself is not touched; only this service's link to it goes.</span>
      )}
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div class="row">
        <button type="button" class="danger" disabled={!dependents || busy} onClick={() => void remove()}>
          {busy ? 'Deleting…' : `Delete ${source.type}`}
        </button>
        <button type="button" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** The collapsible settings of one source; loads what depends on it when opened. */
export function SourceSettings({ source, onChanged }: { source: Source; onChanged: () => void }) {
  const admin = useRole('admin');
  const [open, setOpen] = useState(false);
  const [dependents, setDependents] = useState<Dependents | null>(null);
  if (!admin) return null;
  const toggle = (e: Event) => {
    const isOpen = (e.currentTarget as HTMLDetailsElement).open;
    setOpen(isOpen);
    if (isOpen) {
      get<Dependents>(`/bootstrap/sources/${source.id}/dependents`).then(setDependents, () =>
        setDependents(null),
      );
    }
  };
  return (
    <details class="panel-body source-settings" onToggle={toggle} data-testid="source-settings">
      <summary>Settings</summary>
      {open && (
        <div class="stack">
          <SettingsForm source={source} dependents={dependents} onSaved={onChanged} />
          <DeleteSource source={source} dependents={dependents} onDeleted={onChanged} />
        </div>
      )}
    </details>
  );
}
