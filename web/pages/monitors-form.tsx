// The monitor form: what to watch (source, key with the source's keys suggested, path with the key's
// paths suggested, granularity, timeframe), the rule (strategy and its settings, missing buckets as
// zero), how to notify (for, repeat every, recovery, no data, channels), and beside it a live preview
// of the rule over the last 7 days. The server's 422 errors are shown at their fields.
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../lib/api';
import { useLoad } from '../lib/hooks';
import { Link, navigate, useLeaveGuard } from '../lib/router';
import { fetchSeries } from '../lib/series';
import { keyCounts } from '../lib/explore-data';
import { fitGranularity, isoSeconds, PRESETS, spanMs } from '../lib/view';
import { sourceLabel } from '../lib/sources';
import {
  channelIds,
  formFieldOf,
  ruleLines,
  ruleSetting,
  SETTINGS,
  STRATEGIES,
  STRATEGY_LABELS,
  type Channel,
  type Monitor,
  type MonitorRule,
  type Preview,
  type Strategy,
} from '../lib/monitors';
import type { Source } from '../lib/types';
import { collectPaths } from '../widgets';
import { PREVIEW_DAYS, PreviewChart, previewSentence } from './monitors-preview';

const SYSTEM_KEY = '__system__key__';
const DAY = 86_400_000;
const DEBOUNCE_MS = 500;

export interface Draft {
  name: string;
  description: string;
  source: string;
  key: string;
  path: string;
  granularity: string;
  timeframe: string;
  strategy: Strategy;
  /** every strategy's settings as typed, so switching back and forth keeps them */
  settings: Record<Strategy, Record<string, string>>;
  treat_missing_as_zero: boolean;
  for: string;
  repeat_every: string;
  notify_recovery: boolean;
  notify_no_data: boolean;
  channels: string[];
}

const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

function settingsOf(rule: MonitorRule | undefined): Record<Strategy, Record<string, string>> {
  const out = {} as Record<Strategy, Record<string, string>>;
  for (const strategy of STRATEGIES) {
    const own = rule?.analysis_strategy === strategy ? rule : undefined;
    out[strategy] = Object.fromEntries(
      SETTINGS[strategy].map((f) => [
        f.name,
        own ? text(ruleSetting(own, f.name)) || f.fallback : f.fallback,
      ]),
    );
  }
  return out;
}

export function draftOf(m: Monitor | null, sources: Source[]): Draft {
  const source = sources.find((s) => s.id === m?.source_id) ?? sources[0];
  const rule = m?.alerts[0];
  const strategy = (STRATEGIES as readonly string[]).includes(rule?.analysis_strategy ?? '')
    ? (rule!.analysis_strategy as Strategy)
    : 'threshold';
  const grans = source?.granularities ?? [];
  return {
    name: m?.name ?? '',
    description: m?.description ?? '',
    source: source?.id ?? '',
    key: m?.alert_metric_key ?? '',
    path: m?.alert_metric_path ?? '',
    granularity: m?.alert_granularity ?? source?.default_granularity ?? grans[0] ?? '1h',
    timeframe: m?.alert_timeframe ?? '1h',
    strategy,
    settings: settingsOf(rule),
    treat_missing_as_zero: Boolean(
      rule?.settings.treat_missing_as_zero ?? rule?.settings.treat_nil_as_zero ?? false,
    ),
    for: m?.for ?? '0m',
    repeat_every: m?.repeat_every ?? '',
    notify_recovery: m?.notify_recovery ?? true,
    notify_no_data: m?.notify_no_data ?? false,
    channels: m ? channelIds(m) : [],
  };
}

/** The rule as the API takes it: numbers as numbers, an empty number left out (the server names it). */
function ruleOf(d: Draft, id: string | undefined): MonitorRule {
  const settings: Record<string, unknown> = {};
  for (const f of SETTINGS[d.strategy]) {
    const raw = (d.settings[d.strategy][f.name] ?? '').trim();
    if (raw === '') continue;
    if (f.kind === 'number') settings[f.name] = Number(raw);
    else if (!(d.strategy === 'change' && f.name === 'direction' && raw === 'any')) settings[f.name] = raw;
  }
  settings.treat_missing_as_zero = d.treat_missing_as_zero;
  return { ...(id ? { id } : {}), analysis_strategy: d.strategy, settings };
}

/** The monitor's body for POST/PUT (and the preview): the form's fields over what it does not edit. */
export function bodyOf(d: Draft, initial: Monitor | null, sources: Source[]): Record<string, unknown> {
  const source = sources.find((s) => s.id === d.source);
  const kept = (initial?.delivery_channels ?? []).filter((c) => typeof c.channel_id !== 'string');
  const rules = initial?.alerts ?? [];
  const sameStrategy = rules[0]?.analysis_strategy === d.strategy;
  return {
    name: d.name.trim(),
    description: d.description.trim() || null,
    type: 'alert',
    status: initial?.status ?? 'active',
    source_type: source?.type ?? 'project',
    source_id: d.source,
    alert_metric_key: d.key.trim(),
    alert_metric_path: d.path.trim(),
    alert_timeframe: d.timeframe.trim(),
    alert_granularity: d.granularity,
    alert_notify_every: initial?.alert_notify_every ?? 1,
    delivery_channels: [...kept, ...d.channels.map((channel_id) => ({ channel_id }))],
    alerts: [ruleOf(d, sameStrategy ? rules[0]?.id : undefined), ...rules.slice(1)],
    for: d.for.trim() || '0m',
    repeat_every: d.repeat_every.trim() || null,
    notify_recovery: d.notify_recovery,
    notify_no_data: d.notify_no_data,
  };
}

/** Field errors of a 422 by form field; those no field shows go under `base`. */
function fieldErrors(err: unknown, strategy: string): Record<string, string[]> {
  if (!(err instanceof ApiError)) return { base: [String((err as Error)?.message ?? err)] };
  const fields = err.fields;
  if (Object.keys(fields).length === 0) return { base: [err.message] };
  const out: Record<string, string[]> = {};
  for (const [name, messages] of Object.entries(fields)) {
    const field = formFieldOf(name, strategy);
    const list = (out[field ?? 'base'] ??= []);
    list.push(...(field ? messages : messages.map((m) => `${name}: ${m}`)));
  }
  return out;
}

/** Labels of the fields, for the list of errors at the top. */
const LABELS: Record<string, string> = {
  name: 'Name',
  description: 'Description',
  source: 'Source',
  key: 'Key',
  path: 'Path',
  granularity: 'Granularity',
  timeframe: 'Timeframe',
  strategy: 'Rule',
  for: 'For',
  repeat_every: 'Repeat every',
  channels: 'Channels',
  treat_missing_as_zero: 'Treat missing as zero',
  notify_recovery: 'Notify recovery',
  notify_no_data: 'Notify no data',
};

interface FormProps {
  initial: Monitor | null;
  sources: Source[];
  channels: Channel[];
}

export function MonitorForm({ initial, sources, channels }: FormProps) {
  const [draft, setDraft] = useState(() => draftOf(initial, sources));
  const start = useRef(draft);
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const [saving, setSaving] = useState(false);
  const saved = useRef(false);
  const dirty = () =>
    !saved.current && JSON.stringify(draft) !== JSON.stringify(start.current)
      ? 'This monitor has unsaved changes. Leave anyway?'
      : null;
  const guard = useRef(dirty);
  guard.current = dirty;
  useLeaveGuard(useMemo(() => () => guard.current(), []));
  const formRef = useRef<HTMLFormElement>(null);
  const source = sources.find((s) => s.id === draft.source) ?? null;
  // Editing a field clears what the server said about it.
  const clear = (name: string) =>
    setErrors((e) => {
      if (!e[name]) return e;
      const { [name]: _gone, ...rest } = e;
      return rest;
    });
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => {
    clear(name);
    setDraft((d) => ({ ...d, [name]: value }));
  };
  const setSetting = (name: string, value: string) => {
    clear(name);
    setDraft((d) => ({
      ...d,
      settings: { ...d.settings, [d.strategy]: { ...d.settings[d.strategy], [name]: value } },
    }));
  };

  const body = useMemo(() => bodyOf(draft, initial, sources), [draft, initial, sources]);
  const suggestions = useSuggestions(source, draft.key);

  const submit = async (e: Event) => {
    e.preventDefault();
    setSaving(true);
    setErrors({});
    try {
      const monitor = initial
        ? await api<Monitor>('PUT', `/monitors/${initial.id}`, body)
        : await api<Monitor>('POST', '/monitors', body);
      saved.current = true;
      navigate(`/monitors/${monitor.id}`);
    } catch (err) {
      const next = fieldErrors(err, draft.strategy);
      setErrors(next);
      setSaving(false);
      // Focus the first field the server named, or the summary.
      requestAnimationFrame(() =>
        formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"], .form-errors')?.focus(),
      );
    }
  };

  const err = (name: string) => errors[name];
  const fieldProps = (name: string) => ({
    id: `mf-${name}`,
    name,
    'aria-invalid': err(name) ? ('true' as const) : undefined,
    'aria-describedby': err(name) ? `mf-${name}-error` : undefined,
  });
  const settingFields = SETTINGS[draft.strategy];
  const unlisted = Object.entries(errors).filter(
    ([k]) => k !== 'base' && !LABELS[k] && !settingFields.some((f) => f.name === k),
  );

  return (
    <div class="monitor-editor">
      <form
        ref={formRef}
        class="panel panel-body stack monitor-form"
        onSubmit={submit}
        aria-label="Monitor"
        noValidate
      >
        {(errors.base || unlisted.length > 0) && (
          <div class="notice error form-errors" role="alert" tabIndex={-1}>
            {[...(errors.base ?? []), ...unlisted.flatMap(([k, m]) => m.map((x) => `${k}: ${x}`))].map(
              (m) => (
                <div key={m}>{m}</div>
              ),
            )}
          </div>
        )}
        <fieldset class="form-section">
          <legend>What to watch</legend>
          <div class="form-grid">
            <Field label="Name" name="name" errors={err('name')} wide>
              <input
                {...fieldProps('name')}
                required
                maxLength={255}
                value={draft.name}
                placeholder="Orders stopped"
                onInput={(e) => set('name', (e.target as HTMLInputElement).value)}
              />
            </Field>
            <Field label="Source" name="source" errors={err('source')}>
              <select
                {...fieldProps('source')}
                value={draft.source}
                onChange={(e) => set('source', (e.target as HTMLSelectElement).value)}
              >
                {sources.map((s) => (
                  <option key={s.id} value={s.id}>
                    {sourceLabel(s)}
                  </option>
                ))}
              </select>
            </Field>
            <Field
              label="Key"
              name="key"
              errors={err('key')}
              hint="A key, or a pattern with a named group to watch each matching key"
            >
              <input
                {...fieldProps('key')}
                required
                list="mf-keys"
                value={draft.key}
                placeholder="shop::orders or cpu,host=(?<host>[^,]+)"
                spellcheck={false}
                autoComplete="off"
                onInput={(e) => set('key', (e.target as HTMLInputElement).value)}
              />
              <datalist id="mf-keys">
                {suggestions.keys.map((k) => (
                  <option key={k} value={k} />
                ))}
              </datalist>
            </Field>
            <Field label="Path" name="path" errors={err('path')}>
              <input
                {...fieldProps('path')}
                required
                list="mf-paths"
                value={draft.path}
                placeholder="count"
                spellcheck={false}
                autoComplete="off"
                onInput={(e) => set('path', (e.target as HTMLInputElement).value)}
              />
              <datalist id="mf-paths">
                {suggestions.paths.map((p) => (
                  <option key={p} value={p} />
                ))}
              </datalist>
            </Field>
            <Field label="Granularity" name="granularity" errors={err('granularity')}>
              <select
                {...fieldProps('granularity')}
                value={draft.granularity}
                onChange={(e) => set('granularity', (e.target as HTMLSelectElement).value)}
              >
                {(source?.granularities ?? [draft.granularity]).map((g) => (
                  <option key={g} value={g}>
                    {g}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Timeframe (window evaluated)" name="timeframe" errors={err('timeframe')}>
              <input
                {...fieldProps('timeframe')}
                required
                list="mf-timeframes"
                value={draft.timeframe}
                placeholder="1h"
                onInput={(e) => set('timeframe', (e.target as HTMLInputElement).value)}
              />
              <datalist id="mf-timeframes">
                {PRESETS.map((p) => (
                  <option key={p} value={p} />
                ))}
              </datalist>
            </Field>
          </div>
        </fieldset>

        <fieldset class="form-section">
          <legend>Rule</legend>
          <div class="form-grid">
            <Field label="Strategy" name="strategy" errors={err('strategy')} wide>
              <select
                {...fieldProps('strategy')}
                value={draft.strategy}
                onChange={(e) => set('strategy', (e.target as HTMLSelectElement).value as Strategy)}
              >
                {STRATEGIES.map((s) => (
                  <option key={s} value={s}>
                    {STRATEGY_LABELS[s]}
                  </option>
                ))}
              </select>
            </Field>
            {settingFields.map((f) => (
              <Field key={`${draft.strategy}-${f.name}`} label={f.label} name={f.name} errors={err(f.name)}>
                {f.kind === 'choice' ? (
                  <select
                    {...fieldProps(f.name)}
                    value={draft.settings[draft.strategy][f.name]}
                    onChange={(e) => setSetting(f.name, (e.target as HTMLSelectElement).value)}
                  >
                    {f.options!.map((o) => (
                      <option key={o} value={o}>
                        {o}
                      </option>
                    ))}
                  </select>
                ) : f.kind === 'number' ? (
                  <input
                    {...fieldProps(f.name)}
                    type="number"
                    inputMode="decimal"
                    min={f.min}
                    step={f.step}
                    value={draft.settings[draft.strategy][f.name]}
                    onInput={(e) => setSetting(f.name, (e.target as HTMLInputElement).value)}
                  />
                ) : (
                  <input
                    {...fieldProps(f.name)}
                    placeholder={f.placeholder}
                    value={draft.settings[draft.strategy][f.name]}
                    onInput={(e) => setSetting(f.name, (e.target as HTMLInputElement).value)}
                  />
                )}
              </Field>
            ))}
            <Check
              label="Treat a missing bucket as zero"
              name="treat_missing_as_zero"
              checked={draft.treat_missing_as_zero}
              errors={err('treat_missing_as_zero')}
              onChange={(v) => set('treat_missing_as_zero', v)}
            />
          </div>
        </fieldset>

        <fieldset class="form-section">
          <legend>Notify</legend>
          <div class="form-grid">
            <Field label="For (hold before firing)" name="for" errors={err('for')}>
              <input
                {...fieldProps('for')}
                value={draft.for}
                placeholder="0m"
                onInput={(e) => set('for', (e.target as HTMLInputElement).value)}
              />
            </Field>
            <Field label="Repeat every (while firing)" name="repeat_every" errors={err('repeat_every')}>
              <input
                {...fieldProps('repeat_every')}
                value={draft.repeat_every}
                placeholder="never, or 2h"
                onInput={(e) => set('repeat_every', (e.target as HTMLInputElement).value)}
              />
            </Field>
            <Check
              label="Notify the recovery"
              name="notify_recovery"
              checked={draft.notify_recovery}
              errors={err('notify_recovery')}
              onChange={(v) => set('notify_recovery', v)}
            />
            <Check
              label="Notify when data stops (no data)"
              name="notify_no_data"
              checked={draft.notify_no_data}
              errors={err('notify_no_data')}
              onChange={(v) => set('notify_no_data', v)}
            />
            <fieldset
              class="wide channel-picks"
              id="mf-channels"
              aria-invalid={err('channels') ? 'true' : undefined}
              aria-describedby={err('channels') ? 'mf-channels-error' : undefined}
              tabIndex={err('channels') ? -1 : undefined}
            >
              <legend>Channels to deliver to</legend>
              {channels.length === 0 && (
                <p class="muted form-note">
                  No channels yet. <Link href="/channels">Add a channel</Link> (webhook, Slack, ntfy, Gotify,
                  e-mail) to be notified; the monitor still records its history without one.
                </p>
              )}
              {channels.map((c) => (
                <label key={c.id} class="channel-pick">
                  <input
                    type="checkbox"
                    name="channels"
                    value={c.id}
                    checked={draft.channels.includes(c.id)}
                    onChange={(e) => {
                      const on = (e.target as HTMLInputElement).checked;
                      set(
                        'channels',
                        on ? [...draft.channels, c.id] : draft.channels.filter((id) => id !== c.id),
                      );
                    }}
                  />
                  {c.name} <span class="muted">({c.preset ?? c.type})</span>
                </label>
              ))}
              <FieldError name="channels" errors={err('channels')} />
            </fieldset>
          </div>
        </fieldset>

        <div class="row">
          <button type="submit" class="primary" disabled={saving}>
            {initial ? 'Save monitor' : 'Create monitor'}
          </button>
          <Link class="button" href={initial ? `/monitors/${initial.id}` : '/monitors'}>
            Cancel
          </Link>
        </div>
      </form>
      <LivePreview body={body} draft={draft} source={source} />
    </div>
  );
}

function Field({
  label,
  name,
  errors,
  wide,
  hint,
  children,
}: {
  label: string;
  name: string;
  errors?: string[];
  wide?: boolean;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class={`field${wide ? ' wide' : ''}${errors ? ' field--invalid' : ''}`}>
      <label for={`mf-${name}`}>{label}</label>
      {children}
      {hint && !errors && <span class="field-hint">{hint}</span>}
      <FieldError name={name} errors={errors} />
    </div>
  );
}

function FieldError({ name, errors }: { name: string; errors?: string[] }) {
  if (!errors?.length) return null;
  return (
    <span class="field-error" id={`mf-${name}-error`}>
      {errors.join('; ')}
    </span>
  );
}

function Check({
  label,
  name,
  checked,
  errors,
  onChange,
}: {
  label: string;
  name: string;
  checked: boolean;
  errors?: string[];
  onChange: (v: boolean) => void;
}) {
  return (
    <div class="check wide">
      <label>
        <input
          type="checkbox"
          id={`mf-${name}`}
          name={name}
          checked={checked}
          aria-invalid={errors ? 'true' : undefined}
          aria-describedby={errors ? `mf-${name}-error` : undefined}
          onChange={(e) => onChange((e.target as HTMLInputElement).checked)}
        />
        {label}
      </label>
      <FieldError name={name} errors={errors} />
    </div>
  );
}

/** Keys seen in the source over the last 7 days, and the paths of the chosen key. */
function useSuggestions(source: Source | null, key: string): { keys: string[]; paths: string[] } {
  const [now] = useState(() => Date.now());
  const range = (s: Source) => ({
    from: now - PREVIEW_DAYS * DAY,
    to: now,
    granularity: fitGranularity(s.granularities, null, PREVIEW_DAYS * DAY, 400),
  });
  const keys = useLoad(
    (signal) =>
      source
        ? fetchSeries(source.id, SYSTEM_KEY, range(source), signal).then((s) =>
            keyCounts(s).keys.map((k) => k.key),
          )
        : Promise.resolve([]),
    [source?.id],
  );
  // A pattern's paths come from the first key it matches.
  const concrete = useMemo(() => {
    const list = keys.data ?? [];
    if (list.includes(key)) return key;
    try {
      const re = new RegExp(`^(?:${key})$`);
      return list.find((k) => re.test(k)) ?? null;
    } catch {
      return null;
    }
  }, [keys.data, key]);
  const paths = useLoad(
    (signal) =>
      source && concrete
        ? fetchSeries(source.id, concrete, range(source), signal).then(collectPaths)
        : Promise.resolve([]),
    [source?.id, concrete],
  );
  return { keys: keys.data ?? [], paths: paths.data ?? [] };
}

type PreviewState =
  | { kind: 'idle'; why: string }
  | { kind: 'loading'; last: Preview | null }
  | { kind: 'ready'; preview: Preview }
  | { kind: 'failed'; message: string; last: Preview | null };

/** The preview, asked again (debounced) whenever the monitor's body changes. */
function LivePreview({
  body,
  draft,
  source,
}: {
  body: Record<string, unknown>;
  draft: Draft;
  source: Source | null;
}) {
  const [state, setState] = useState<PreviewState>({ kind: 'idle', why: '' });
  const missing = !draft.source
    ? 'a source'
    : !draft.key.trim()
      ? 'a key'
      : !draft.path.trim()
        ? 'a path'
        : null;
  const json = JSON.stringify(body);
  useEffect(() => {
    if (missing) {
      setState({
        kind: 'idle',
        why: `Choose ${missing} to see the rule over the last ${PREVIEW_DAYS} days.`,
      });
      return;
    }
    const controller = new AbortController();
    const last = state.kind === 'ready' ? state.preview : 'last' in state ? state.last : null;
    const timer = setTimeout(() => {
      setState({ kind: 'loading', last });
      const to = Date.now();
      api<Preview>(
        'POST',
        '/monitors/preview',
        // A name is not needed to see the rule: a form without one yet previews under a stand-in.
        {
          ...body,
          name: body.name || 'Preview',
          from: isoSeconds(to - PREVIEW_DAYS * DAY),
          to: isoSeconds(to),
        },
        { signal: controller.signal },
      ).then(
        (preview) => !controller.signal.aborted && setState({ kind: 'ready', preview }),
        (err: Error) => {
          if (controller.signal.aborted || err.name === 'AbortError') return;
          const fields = err instanceof ApiError ? err.fields : {};
          const named = Object.entries(fields).map(([f, m]) => {
            const field = formFieldOf(f, draft.strategy);
            const label = field
              ? (LABELS[field] ?? SETTINGS[draft.strategy].find((s) => s.name === field)?.label ?? field)
              : f;
            return `${label}: ${m.join(', ')}`;
          });
          setState({ kind: 'failed', message: named.length ? named.join('; ') : err.message, last });
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [json, missing]);

  const preview = state.kind === 'ready' ? state.preview : state.kind === 'idle' ? null : state.last;
  const lines = ruleLines(body.alerts ? (body.alerts as MonitorRule[])[0] : undefined);
  const windowOk = spanMs(draft.timeframe) !== null;
  return (
    <section
      class="panel monitor-preview"
      aria-label="Preview"
      aria-busy={state.kind === 'loading' ? 'true' : undefined}
    >
      <header>
        <h2>Preview: last {PREVIEW_DAYS} days</h2>
        {state.kind === 'loading' && <span class="muted">updating…</span>}
      </header>
      <div class="panel-body stack">
        {state.kind === 'idle' && <p class="muted">{state.why}</p>}
        {state.kind === 'failed' && (
          <p class="error-text" role="status">
            No preview: {state.message}
          </p>
        )}
        {!preview && state.kind === 'loading' && <div class="skeleton preview__plot" aria-hidden="true" />}
        {preview && (
          <>
            <p
              class={`preview__summary${preview.fired_count > 0 ? ' preview__summary--fired' : ''}`}
              role="status"
              data-testid="preview-summary"
            >
              {cap(previewSentence(preview))}.
            </p>
            <PreviewChart
              preview={preview}
              lines={lines}
              granularity={draft.granularity}
              timeZone={source?.time_zone ?? 'UTC'}
              label={`${draft.key} ${draft.path} over the last ${PREVIEW_DAYS} days`}
            />
          </>
        )}
        {!windowOk && draft.timeframe && (
          <p class="muted form-note">The timeframe reads like 15m, 1h or 1d.</p>
        )}
      </div>
    </section>
  );
}

const cap = (s: string) => (s ? s[0]!.toUpperCase() + s.slice(1) : s);
