// Creating a project (embedded store) or a database source (a Trifle::Stats store elsewhere).
import { useState } from 'preact/hooks';
import { api, ApiError } from '../lib/api';
import { FieldError, ZoneInput } from './source-settings';

/** A create form's submit: field errors go next to their fields, anything else in one message. */
function useSubmit(path: string, toBody: (form: FormData) => Record<string, unknown>, onCreated: () => void) {
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string[]>>({});
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    setError(null);
    setFields({});
    try {
      await api('POST', path, toBody(new FormData(form)));
      form.reset();
      onCreated();
    } catch (err) {
      const named = err instanceof ApiError ? err.fields : {};
      setFields(named);
      setError(Object.keys(named).length ? null : (err as Error).message);
    }
  };
  /** aria props and the message of one field */
  const field = (name: string) => ({
    invalid: {
      'aria-invalid': fields[name] ? true : undefined,
      'aria-describedby': fields[name] ? `${path.replace(/\W/g, '-')}-${name}` : undefined,
    },
    error: <FieldError id={`${path.replace(/\W/g, '-')}-${name}`} messages={fields[name]} />,
  });
  return { error, submit, field };
}

const text = (form: FormData, name: string) => {
  const value = String(form.get(name) ?? '').trim();
  return value === '' ? undefined : value;
};

// The zone field is uncontrolled (defaultValue): a re-render after a failed submit keeps what was
// typed, and form.reset() after a create brings back the browser's zone.
export function NewProjectForm({ onCreated }: { onCreated: () => void }) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const { error, submit, field } = useSubmit(
    '/bootstrap/projects',
    (f) => ({
      name: text(f, 'name'),
      time_zone: text(f, 'time_zone'),
      granularities: text(f, 'granularities'),
      default_timeframe: text(f, 'default_timeframe'),
    }),
    onCreated,
  );
  return (
    <form
      class="panel panel-body stack"
      onSubmit={submit}
      aria-label="New project"
      style={{ flex: '1 1 320px' }}
    >
      <h2>New project</h2>
      <label class="field">
        Name
        <input name="name" required maxLength={255} placeholder="web shop" {...field('name').invalid} />
        {field('name').error}
      </label>
      <label class="field">
        Time zone
        <ZoneInput
          listId="new-project-zones"
          defaultValue={zone}
          invalid={!!field('time_zone').invalid['aria-invalid']}
          describedBy={field('time_zone').invalid['aria-describedby']}
        />
        {field('time_zone').error}
      </label>
      <label class="field">
        Granularities
        <input name="granularities" placeholder="1m,1h,1d,1w,1mo,1q,1y" {...field('granularities').invalid} />
        {field('granularities').error}
      </label>
      <label class="field">
        Default range
        <input name="default_timeframe" placeholder="24h" {...field('default_timeframe').invalid} />
        {field('default_timeframe').error}
      </label>
      {field('default_granularity').error}
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" class="primary">
          Create project
        </button>
      </div>
    </form>
  );
}

const DRIVERS = ['sqlite', 'postgres', 'mysql', 'redis', 'mongo'];

export function NewDatabaseForm({ onCreated }: { onCreated: () => void }) {
  const [driver, setDriver] = useState('sqlite');
  const { error, submit, field } = useSubmit(
    '/bootstrap/databases',
    (f) => {
      const port = text(f, 'port');
      return {
        display_name: text(f, 'display_name'),
        driver,
        ...(driver === 'sqlite'
          ? { file_path: text(f, 'file_path') }
          : {
              host: text(f, 'host'),
              port: port ? Number(port) : undefined,
              database_name: text(f, 'database_name'),
              username: text(f, 'username'),
              password: text(f, 'password'),
            }),
        time_zone: text(f, 'time_zone'),
      };
    },
    onCreated,
  );
  return (
    <form
      class="panel panel-body stack"
      onSubmit={submit}
      aria-label="New database"
      style={{ flex: '1 1 320px' }}
    >
      <h2>New database source</h2>
      <div class="form-grid">
        <label class="field wide">
          Name
          <input name="display_name" required maxLength={255} {...field('display_name').invalid} />
          {field('display_name').error}
        </label>
        <label class="field">
          Driver
          <select
            name="driver"
            value={driver}
            onChange={(e) => setDriver((e.target as HTMLSelectElement).value)}
          >
            {DRIVERS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          Time zone
          <ZoneInput
            listId="new-database-zones"
            defaultValue="UTC"
            invalid={!!field('time_zone').invalid['aria-invalid']}
            describedBy={field('time_zone').invalid['aria-describedby']}
          />
          {field('time_zone').error}
        </label>
        {driver === 'sqlite' ? (
          <label class="field wide">
            File (inside the organization's folder)
            <input name="file_path" required placeholder="stats.sqlite" {...field('file_path').invalid} />
            {field('file_path').error}
          </label>
        ) : (
          <>
            <label class="field">
              Host
              <input name="host" required {...field('host').invalid} />
              {field('host').error}
            </label>
            <label class="field">
              Port
              <input name="port" type="number" />
            </label>
            <label class="field">
              Database
              <input name="database_name" />
            </label>
            <label class="field">
              User
              <input name="username" autocomplete="off" />
            </label>
            <label class="field wide">
              Password
              <input name="password" type="password" autocomplete="new-password" />
            </label>
          </>
        )}
      </div>
      {error && (
        <p class="error-text" role="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" class="primary">
          Create database source
        </button>
      </div>
    </form>
  );
}
