// Channels at /channels: where monitors notify. A list with each channel's target (secrets shown
// masked, as the API returns them), "Send test" with its result, and a dialog to create or edit a
// channel of each kind: Slack, Discord, Mattermost and Teams webhooks, a generic webhook, ntfy,
// Gotify and e-mail.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../lib/api';
import { useLoad, useTitle } from '../lib/hooks';
import { Link } from '../lib/router';
import { loadChannels, PRESETS, type Channel, type ChannelType } from '../lib/monitors';
import { ConfirmButton, ErrorNotice, Skeleton } from '../components';
import { Dialog } from './monitors-parts';
import { useRole } from './members';

/** The kinds a person picks from: the webhook presets first, as most homelabs use one of them. */
const KINDS = [
  { kind: 'slack', label: 'Slack', type: 'webhook', preset: 'slack' },
  { kind: 'discord', label: 'Discord', type: 'webhook', preset: 'discord' },
  { kind: 'mattermost', label: 'Mattermost', type: 'webhook', preset: 'mattermost' },
  { kind: 'teams', label: 'Microsoft Teams', type: 'webhook', preset: 'teams' },
  { kind: 'webhook', label: 'Webhook (any JSON)', type: 'webhook', preset: null },
  { kind: 'ntfy', label: 'ntfy', type: 'ntfy', preset: null },
  { kind: 'gotify', label: 'Gotify', type: 'gotify', preset: null },
  { kind: 'email', label: 'E-mail', type: 'email', preset: null },
] as const;
type Kind = (typeof KINDS)[number]['kind'];

const kindOf = (c: Pick<Channel, 'type' | 'preset'>): Kind =>
  c.preset && (PRESETS as readonly string[]).includes(c.preset) ? c.preset : c.type;
const kindLabel = (k: Kind) => KINDS.find((x) => x.kind === k)!.label;

type TestResult = { ok: boolean; status?: number; error?: string };

export function ChannelsPage() {
  useTitle('Channels');
  // Viewers see the channels; editors change and test them (the API refuses the rest).
  const editor = useRole('editor');
  const list = useLoad(loadChannels, []);
  const [editing, setEditing] = useState<Channel | 'new' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tests, setTests] = useState<Record<string, TestResult | 'sending'>>({});
  const sendTest = (c: Channel) => {
    setTests((t) => ({ ...t, [c.id]: 'sending' }));
    api<TestResult>('POST', `/channels/${c.id}/test`).then(
      (result) => setTests((t) => ({ ...t, [c.id]: result })),
      (err: Error) => setTests((t) => ({ ...t, [c.id]: { ok: false, error: err.message } })),
    );
  };
  const remove = (c: Channel) => {
    setError(null);
    api('DELETE', `/channels/${c.id}`).then(list.reload, (err: Error) => setError(err.message));
  };
  return (
    <main>
      <div class="page-head">
        <h1>Channels</h1>
        <Link href="/monitors">Monitors</Link>
        {editor && (
          <button type="button" class="primary" aria-haspopup="dialog" onClick={() => setEditing('new')}>
            New channel
          </button>
        )}
      </div>
      <ErrorNotice message={error ?? list.error} />
      {!list.data && list.loading && <Skeleton lines={3} />}
      {list.data && list.data.length === 0 && (
        <div class="notice">
          No channels yet. A channel is where a monitor's notifications go: a Slack, Discord, Mattermost or
          Teams incoming webhook, any webhook, an ntfy topic, a Gotify application or e-mail.
        </div>
      )}
      {list.data && list.data.length > 0 && (
        <section class="panel" aria-label="Channels">
          <ul class="list channels">
            {list.data.map((c) => {
              const test = tests[c.id];
              return (
                <li key={c.id} data-channel={c.name}>
                  <div class="channel__text">
                    <span class="name">{c.name}</span> <span class="badge">{kindLabel(kindOf(c))}</span>
                    <div class="meta">{targetOf(c)}</div>
                    {test && (
                      <div
                        class={`test-result ${test === 'sending' ? 'muted' : test.ok ? 'test-result--ok' : 'error-text'}`}
                        role="status"
                      >
                        {test === 'sending'
                          ? 'Sending a test…'
                          : test.ok
                            ? `Test sent${test.status ? ` (HTTP ${test.status})` : ''}.`
                            : `Test failed${test.status ? ` (HTTP ${test.status})` : ''}: ${test.error ?? 'no answer'}`}
                      </div>
                    )}
                  </div>
                  {editor && (
                    <div class="actions">
                      <button type="button" disabled={test === 'sending'} onClick={() => sendTest(c)}>
                        Send test<span class="visually-hidden"> to {c.name}</span>
                      </button>
                      <button type="button" aria-haspopup="dialog" onClick={() => setEditing(c)}>
                        Edit<span class="visually-hidden"> {c.name}</span>
                      </button>
                      <ConfirmButton
                        label="Delete"
                        confirm={`Delete ${c.name}`}
                        onConfirm={() => remove(c)}
                      />
                    </div>
                  )}
                </li>
              );
            })}
          </ul>
        </section>
      )}
      {editing && (
        <ChannelDialog
          channel={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </main>
  );
}

/** Where a channel sends, secrets masked: "…a1b2", "ntfy.sh / alerts", "ops@example.com". */
function targetOf(c: Channel): string {
  const s = c.settings;
  const masked = (name: string) => (c.secrets?.[name] ? `${name} ${c.secrets[name]}` : '');
  switch (c.type) {
    case 'ntfy':
      return [`${String(s.server ?? 'https://ntfy.sh')} / ${String(s.topic ?? '')}`, masked('token')]
        .filter(Boolean)
        .join(' · ');
    case 'gotify':
      return [String(s.server ?? ''), masked('token')].filter(Boolean).join(' · ');
    case 'email':
      return Array.isArray(s.to) ? s.to.join(', ') : '';
    default:
      return [c.preset ? '' : String(s.method ?? 'POST'), masked('url'), masked('authorization')]
        .filter(Boolean)
        .join(' · ');
  }
}

interface Form {
  name: string;
  kind: Kind;
  url: string;
  authorization: string;
  method: string;
  headers: string;
  body: string;
  server: string;
  topic: string;
  token: string;
  priority: string;
  tags: string;
  to: string;
  subject_prefix: string;
}

function formOf(c: Channel | null): Form {
  const s = c?.settings ?? {};
  const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  return {
    name: c?.name ?? '',
    kind: c ? kindOf(c) : 'slack',
    url: '',
    authorization: '',
    method: str(s.method) || 'POST',
    headers: s.headers && Object.keys(s.headers).length ? JSON.stringify(s.headers, null, 2) : '',
    body: s.body ? JSON.stringify(s.body, null, 2) : '',
    server: str(s.server),
    topic: str(s.topic),
    token: '',
    priority: str(s.priority),
    tags: Array.isArray(s.tags) ? s.tags.join(', ') : '',
    to: Array.isArray(s.to) ? s.to.join(', ') : '',
    subject_prefix: str(s.subject_prefix),
  };
}

class FormProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const jsonField = (field: string, text: string): unknown => {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new FormProblem(field, 'is not valid JSON');
  }
};
const list = (text: string) =>
  text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The API body: settings as typed, secrets only when typed (an empty one keeps the stored secret). */
function bodyOf(f: Form, editing: boolean): Record<string, unknown> {
  const k = KINDS.find((x) => x.kind === f.kind)!;
  const settings: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  const secret = (name: string, value: string) => {
    if (value.trim()) secrets[name] = value.trim();
  };
  const priority = f.priority.trim() === '' ? null : Number(f.priority);
  switch (k.type) {
    case 'webhook':
      secret('url', f.url);
      if (!k.preset) {
        settings.method = f.method;
        const headers = jsonField('settings.headers', f.headers);
        if (headers !== undefined) settings.headers = headers;
        settings.body = jsonField('settings.body', f.body) ?? null;
        secret('authorization', f.authorization);
      }
      break;
    case 'ntfy':
      settings.server = f.server.trim() || 'https://ntfy.sh';
      settings.topic = f.topic.trim();
      settings.priority = priority;
      settings.tags = list(f.tags);
      secret('token', f.token);
      break;
    case 'gotify':
      settings.server = f.server.trim();
      settings.priority = priority;
      secret('token', f.token);
      break;
    case 'email':
      settings.to = list(f.to);
      settings.subject_prefix = f.subject_prefix.trim() || null;
      break;
  }
  return {
    name: f.name.trim(),
    ...(editing ? {} : { type: k.type }),
    ...(editing ? {} : { preset: k.preset }),
    settings,
    ...(Object.keys(secrets).length || !editing ? { secrets } : {}),
  };
}

/** The form fields a kind shows. */
function shownOf(k: (typeof KINDS)[number]): string[] {
  switch (k.type) {
    case 'webhook':
      return k.preset ? ['url'] : ['url', 'method', 'authorization', 'headers', 'body'];
    case 'ntfy':
      return ['server', 'topic', 'token', 'priority', 'tags'];
    case 'gotify':
      return ['server', 'token', 'priority'];
    default:
      return ['to', 'subject_prefix'];
  }
}

/** A 422's field (`settings.topic`, `secrets.url`) as the form's field name. */
const formField = (name: string) => {
  const field = name.replace(/^(settings|secrets)\./, '').replace(/[.[].*$/, '');
  return field === 'type' || field === 'preset' ? 'kind' : field;
};

function ChannelDialog({
  channel,
  onClose,
  onSaved,
}: {
  channel: Channel | null;
  onClose: () => void;
  onSaved: () => void;
}) {
  const [form, setForm] = useState(() => formOf(channel));
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [busy, setBusy] = useState(false);
  const set = (name: keyof Form, value: string) => setForm((f) => ({ ...f, [name]: value }));
  const k = KINDS.find((x) => x.kind === form.kind)!;
  const stored = (name: string) => channel?.secrets?.[name];

  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors({});
    setBusy(true);
    try {
      const body = bodyOf(form, channel !== null);
      if (channel) await api('PUT', `/channels/${channel.id}`, body);
      else await api('POST', '/channels', body);
      onSaved();
    } catch (err) {
      setBusy(false);
      if (err instanceof FormProblem) return setErrors({ [formField(err.field)]: [err.message] });
      const fields = err instanceof ApiError ? err.fields : {};
      const next: Record<string, string[]> = {};
      for (const [name, messages] of Object.entries(fields)) (next[formField(name)] ??= []).push(...messages);
      if (!Object.keys(next).length) next.base = [(err as Error).message];
      setErrors(next);
    }
  };

  const field = (name: keyof Form, label: string, props: Record<string, unknown> = {}, hint?: string) => (
    <label class={`field${props.wide ? ' wide' : ''}`} key={name}>
      {label}
      {props.multiline ? (
        <textarea
          class="code"
          name={name}
          rows={4}
          value={form[name]}
          aria-invalid={errors[name] ? 'true' : undefined}
          aria-describedby={errors[name] ? `cf-${name}-error` : undefined}
          onInput={(e) => set(name, (e.target as HTMLTextAreaElement).value)}
        />
      ) : (
        <input
          name={name}
          type={(props.type === 'password' ? 'password' : 'text') as 'text'}
          autoComplete={props.type === 'password' ? 'new-password' : 'off'}
          placeholder={props.placeholder as string | undefined}
          value={form[name]}
          spellcheck={false}
          aria-invalid={errors[name] ? 'true' : undefined}
          aria-describedby={errors[name] ? `cf-${name}-error` : undefined}
          onInput={(e) => set(name, (e.target as HTMLInputElement).value)}
        />
      )}
      {hint && !errors[name] && <span class="field-hint">{hint}</span>}
      {errors[name] && (
        <span class="field-error" id={`cf-${name}-error`}>
          {errors[name]!.join('; ')}
        </span>
      )}
    </label>
  );
  // Errors of fields this kind's form does not show (and the request's own) are listed on top.
  const shownFields = new Set(['name', 'kind', ...shownOf(k)]);
  const unshown = Object.entries(errors).flatMap(([f, m]) =>
    f === 'base' ? m : shownFields.has(f) ? [] : m.map((x) => `${f} ${x}`),
  );
  const secretHint = (name: string) =>
    stored(name) ? `Stored: ${stored(name)}. Leave empty to keep it.` : undefined;

  return (
    <Dialog title={channel ? `Edit ${channel.name}` : 'New channel'} onClose={onClose} wide>
      <form class="stack" onSubmit={submit} aria-label="Channel" noValidate>
        {unshown.length > 0 && (
          <p class="error-text" role="alert">
            {unshown.join('; ')}
          </p>
        )}
        <div class="form-grid">
          {field('name', 'Name', { placeholder: 'Ops on Slack' })}
          <label class="field">
            Kind
            <select
              name="kind"
              value={form.kind}
              aria-invalid={errors.kind ? 'true' : undefined}
              aria-describedby={errors.kind ? 'cf-kind-error' : undefined}
              disabled={channel !== null}
              onChange={(e) => set('kind', (e.target as HTMLSelectElement).value)}
            >
              {KINDS.map((x) => (
                <option key={x.kind} value={x.kind}>
                  {x.label}
                </option>
              ))}
            </select>
            {errors.kind && (
              <span class="field-error" id="cf-kind-error">
                {errors.kind.join('; ')}
              </span>
            )}
          </label>
          {k.type === 'webhook' &&
            field(
              'url',
              k.preset ? `${k.label} incoming webhook URL` : 'URL',
              {
                type: 'password',
                wide: true,
                placeholder: stored('url') ? `stored ${stored('url')}` : 'https://…',
              },
              secretHint('url') ?? 'Kept encrypted; shown only by its last four characters.',
            )}
          {k.type === 'webhook' && !k.preset && (
            <>
              <label class="field">
                Method
                <select
                  name="method"
                  value={form.method}
                  onChange={(e) => set('method', (e.target as HTMLSelectElement).value)}
                >
                  {['POST', 'PUT', 'PATCH'].map((m) => (
                    <option key={m}>{m}</option>
                  ))}
                </select>
              </label>
              {field(
                'authorization',
                'Authorization header (secret)',
                {
                  type: 'password',
                  placeholder: stored('authorization') ? `stored ${stored('authorization')}` : 'Bearer …',
                },
                secretHint('authorization'),
              )}
              {field('headers', 'Headers (JSON object)', { multiline: true, wide: true })}
              {field(
                'body',
                'Body template (JSON; {{monitor.name}}, {{state}}, {{value}}…; empty for the default)',
                { multiline: true, wide: true },
              )}
            </>
          )}
          {(k.type === 'ntfy' || k.type === 'gotify') &&
            field('server', 'Server URL', {
              placeholder: k.type === 'ntfy' ? 'https://ntfy.sh' : 'https://gotify.example.lan',
            })}
          {k.type === 'ntfy' && field('topic', 'Topic', { placeholder: 'homelab-alerts' })}
          {(k.type === 'ntfy' || k.type === 'gotify') &&
            field(
              'token',
              k.type === 'ntfy' ? 'Access token (optional)' : 'Application token',
              { type: 'password', placeholder: stored('token') ? `stored ${stored('token')}` : '' },
              secretHint('token'),
            )}
          {(k.type === 'ntfy' || k.type === 'gotify') &&
            field('priority', k.type === 'ntfy' ? 'Priority (1–5)' : 'Priority (0–10)', {
              placeholder: 'default',
            })}
          {k.type === 'ntfy' && field('tags', 'Tags (comma separated)', { placeholder: 'warning, server' })}
          {k.type === 'email' &&
            field(
              'to',
              'Recipients (comma separated)',
              { wide: true, placeholder: 'ops@example.com' },
              'Sent through the [smtp] server of the service configuration.',
            )}
          {k.type === 'email' && field('subject_prefix', 'Subject prefix', { placeholder: '[metrics]' })}
        </div>
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            {channel ? 'Save channel' : 'Create channel'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
