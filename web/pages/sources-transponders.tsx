// A source's transponders on the Sources page (SPEC 15, docs/transponders.md): the list in the
// order they run, each enabled or not, moved up or down, edited or deleted, and the form that makes
// or changes one: name, key or key pattern, the paths a..z, the expression and the response path,
// with a live preview of the draft over the last day of a key (the read debounced, the expression
// evaluated with the server's own code on every keystroke).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError } from '../lib/api';
import { useLoad } from '../lib/hooks';
import { fetchSeries } from '../lib/series';
import {
  applies,
  draftProblem,
  evaluateWith,
  loadTransponders,
  previewRows,
  transpondersPath,
  type Transponder,
} from '../lib/transponders';
import type { Source } from '../lib/types';
import { fitGranularity } from '../lib/view';
import { ConfirmButton, ErrorNotice } from '../components';
import { isPattern } from '../../src/shared/key-pattern';
import { MAX_TRANSPONDER_PATHS, parseTransponderExpression, rowLetter } from '../../src/shared/expression';

const PREVIEW_MS = 24 * 3_600_000;
const PREVIEW_ROWS = 8;
const DEBOUNCE_MS = 400;

export function Transponders({ source }: { source: Source }) {
  const list = useLoad((signal) => loadTransponders(source.id, signal), [source.id]);
  const [editing, setEditing] = useState<Transponder | 'new' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const base = transpondersPath(source.id);
  const run = (work: Promise<unknown>) =>
    work.then(
      () => {
        setError(null);
        list.reload();
      },
      (err: Error) => {
        setError(err.message);
        list.reload();
      },
    );
  const items = list.data ?? [];
  /** Moves `t` one place; every transponder whose place changed gets its new order (1, 2, ...). */
  const move = (t: Transponder, by: -1 | 1) => {
    const at = items.findIndex((x) => x.id === t.id);
    const next = [...items];
    next.splice(at, 1);
    next.splice(at + by, 0, t);
    const changed = next.flatMap((x, i) => (x.order === i + 1 ? [] : [{ x, order: i + 1 }]));
    void run(
      changed.reduce<Promise<unknown>>(
        (chain, { x, order }) => chain.then(() => api('PUT', `${base}/${x.id}`, { order })),
        Promise.resolve(),
      ),
    );
  };
  return (
    <div class="panel-body stack transponders" data-transponders={source.display_name}>
      <div class="row">
        <h3 class="section-title">Transponders</h3>
        <span class="muted">derived values computed on every read, in this order</span>
        <span class="spacer" />
        {editing === null && (
          <button type="button" onClick={() => setEditing('new')}>
            New transponder
          </button>
        )}
      </div>
      <ErrorNotice message={error ?? list.error} />
      <ol class="list" aria-label={`Transponders of ${source.display_name}`}>
        {items.map((t, i) => (
          <li key={t.id} data-transponder={t.name} class={t.enabled ? '' : 'disabled'}>
            <span class="order" aria-hidden="true">
              {i + 1}
            </span>
            <span class="stack tight">
              <span class="name">{t.name}</span>
              <span class="meta">
                <code>{t.key}</code> · {t.config.paths.map((p, k) => `${rowLetter(k)} = ${p}`).join(', ')} ·{' '}
                <code>{t.config.expression}</code> → <code>{t.config.response}</code>
              </span>
            </span>
            <span class="actions">
              <label>
                <input
                  type="checkbox"
                  checked={t.enabled}
                  aria-label={`Enabled: ${t.name}`}
                  onChange={(e) =>
                    void run(
                      api('PUT', `${base}/${t.id}`, { enabled: (e.target as HTMLInputElement).checked }),
                    )
                  }
                />{' '}
                enabled
              </label>
              <button
                type="button"
                aria-label={`Move ${t.name} up`}
                disabled={i === 0}
                onClick={() => move(t, -1)}
              >
                ↑
              </button>
              <button
                type="button"
                aria-label={`Move ${t.name} down`}
                disabled={i === items.length - 1}
                onClick={() => move(t, 1)}
              >
                ↓
              </button>
              <button type="button" aria-label={`Edit ${t.name}`} onClick={() => setEditing(t)}>
                Edit
              </button>
              <ConfirmButton
                label="Delete"
                confirm={`Delete ${t.name}`}
                onConfirm={() => void run(api('DELETE', `${base}/${t.id}`))}
              />
            </span>
          </li>
        ))}
        {list.data?.length === 0 && <li class="muted">No transponders yet.</li>}
      </ol>
      {editing !== null && (
        <TransponderForm
          key={editing === 'new' ? 'new' : editing.id}
          source={source}
          initial={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </div>
  );
}

interface Draft {
  name: string;
  key: string;
  paths: string[];
  expression: string;
  response: string;
  enabled: boolean;
}

const draftOf = (t: Transponder | null): Draft =>
  t
    ? { name: t.name, key: t.key, ...t.config, paths: [...t.config.paths], enabled: t.enabled }
    : { name: '', key: '', paths: [''], expression: 'a', response: '', enabled: true };

/** The value of `later`, once it has stayed the same for `ms`. */
function useDebounced<T>(later: T, ms: number): T {
  const [value, setValue] = useState(later);
  useEffect(() => {
    const id = setTimeout(() => setValue(later), ms);
    return () => clearTimeout(id);
  }, [later, ms]);
  return value;
}

function TransponderForm({
  source,
  initial,
  onDone,
}: {
  source: Source;
  initial: Transponder | null;
  onDone: () => void;
}) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial));
  const [sample, setSample] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string[]>>({});
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((d) => ({ ...d, [name]: value }));
  const pattern = isPattern(draft.key);
  const previewKey = useDebounced((pattern ? sample : draft.key).trim(), DEBOUNCE_MS);
  const paths = draft.paths.map((p) => p.trim());
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const body = { ...draft, paths: paths.filter(Boolean) };
    try {
      const base = transpondersPath(source.id);
      await (initial ? api('PUT', `${base}/${initial.id}`, body) : api('POST', base, body));
      onDone();
    } catch (err) {
      setError((err as Error).message);
      setFields(err instanceof ApiError ? err.fields : {});
      setBusy(false);
    }
  };
  const fieldError = (name: string) =>
    fields[name] ? (
      <span class="error-text" id={`transponder-${name}-error`}>
        {fields[name]!.join(', ')}
      </span>
    ) : null;
  const setPath = (i: number, value: string) =>
    set(
      'paths',
      draft.paths.map((p, j) => (j === i ? value : p)),
    );
  return (
    <form
      class="stack transponder-form"
      aria-label={initial ? `Edit transponder ${initial.name}` : 'New transponder'}
      onSubmit={(e) => void save(e)}
      onKeyDown={(e) => e.key === 'Escape' && onDone()}
    >
      <h3 class="section-title">{initial ? `Edit ${initial.name}` : 'New transponder'}</h3>
      <div class="form-grid">
        <label class="field">
          Name
          <input
            name="name"
            required
            maxLength={255}
            value={draft.name}
            onInput={(e) => set('name', (e.target as HTMLInputElement).value)}
          />
          {fieldError('name')}
        </label>
        <label class="field">
          Key or key pattern (^…$)
          <input
            name="key"
            required
            maxLength={255}
            placeholder="api or ^api(::[a-z]+)?$"
            value={draft.key}
            onInput={(e) => set('key', (e.target as HTMLInputElement).value)}
          />
          {fieldError('key')}
        </label>
        <fieldset class="wide paths">
          <legend>Paths (the expression’s variables)</legend>
          {draft.paths.map((p, i) => (
            <div class="row" key={i}>
              <code class="variable" aria-hidden="true">
                {rowLetter(i)}
              </code>
              <input
                name={`path-${i}`}
                aria-label={`Path ${rowLetter(i)}`}
                placeholder="requests.count"
                value={p}
                onInput={(e) => setPath(i, (e.target as HTMLInputElement).value)}
              />
              <button
                type="button"
                aria-label={`Remove path ${rowLetter(i)}`}
                disabled={draft.paths.length === 1}
                onClick={() =>
                  set(
                    'paths',
                    draft.paths.filter((_, j) => j !== i),
                  )
                }
              >
                ×
              </button>
            </div>
          ))}
          <div>
            <button
              type="button"
              disabled={draft.paths.length >= MAX_TRANSPONDER_PATHS}
              onClick={() => set('paths', [...draft.paths, ''])}
            >
              Add path
            </button>
          </div>
        </fieldset>
        <label class="field">
          Expression
          <input
            name="expression"
            required
            placeholder="a / b * 100"
            value={draft.expression}
            onInput={(e) => set('expression', (e.target as HTMLInputElement).value)}
          />
          {fieldError('config')}
        </label>
        <label class="field">
          Response path
          <input
            name="response"
            required
            placeholder="requests.error_rate"
            value={draft.response}
            onInput={(e) => set('response', (e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="wide">
          <input
            type="checkbox"
            name="enabled"
            checked={draft.enabled}
            onChange={(e) => set('enabled', (e.target as HTMLInputElement).checked)}
          />{' '}
          Enabled
        </label>
        {pattern && (
          <label class="field wide">
            Preview on key (the pattern matches it)
            <input
              name="sample"
              placeholder="api::eu"
              value={sample}
              onInput={(e) => setSample((e.target as HTMLInputElement).value)}
            />
          </label>
        )}
      </div>
      <Preview source={source} previewKey={previewKey} draft={draft} paths={paths} pattern={pattern} />
      <ErrorNotice message={error} />
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {initial ? 'Save transponder' : 'Create transponder'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Preview({
  source,
  previewKey,
  draft,
  paths,
  pattern,
}: {
  source: Source;
  previewKey: string;
  draft: Draft;
  paths: string[];
  pattern: boolean;
}) {
  const series = useLoad(
    (signal) => {
      if (!previewKey) return Promise.resolve(null);
      const to = Date.now();
      const granularity = fitGranularity(source.granularities, null, PREVIEW_MS, 48);
      return fetchSeries(source.id, previewKey, { from: to - PREVIEW_MS, to, granularity }, signal);
    },
    [source.id, previewKey],
  );
  const problem = draftProblem(draft.expression, paths.length);
  const expr = useMemo(() => {
    try {
      return parseTransponderExpression(draft.expression, paths.length);
    } catch {
      return null;
    }
  }, [draft.expression, paths.length]);
  const rows = useMemo(
    () =>
      series.data && expr
        ? previewRows(series.data, paths, (values) => evaluateWith(expr, values)).slice(0, PREVIEW_ROWS)
        : [],
    [series.data, expr, paths.join('\n')],
  );
  const keyMismatch = pattern && previewKey !== '' && !applies({ key: draft.key }, previewKey);
  return (
    <section class="preview" aria-label="Preview" aria-live="polite">
      <div class="row">
        <strong>Preview</strong>
        <span class="muted">
          {previewKey
            ? `the last day of ${previewKey}, newest first`
            : pattern
              ? 'type a key the pattern matches'
              : 'type a key'}
        </span>
      </div>
      {problem && (
        <div class="notice error" role="alert" data-testid="preview-error">
          {problem}
        </div>
      )}
      {keyMismatch && (
        <div class="notice">The pattern does not match {previewKey}: it would not apply there.</div>
      )}
      <ErrorNotice message={series.error} />
      {!problem && series.data && rows.length === 0 && (
        <div class="notice muted">None of the paths has a value in the last day of {previewKey}.</div>
      )}
      {!problem && rows.length > 0 && (
        <div class="scroll">
          <table class="data" data-testid="preview-table">
            <thead>
              <tr>
                <th>at</th>
                {paths.map((p, i) => (
                  <th key={i} class="num" title={p}>
                    {rowLetter(i)} <span class="muted">{p}</span>
                  </th>
                ))}
                <th class="num derived-head">{draft.response || 'response'}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.at}>
                  <td>{row.at}</td>
                  {row.inputs.map((v, i) => (
                    <td key={i} class="num">
                      {v ?? '—'}
                    </td>
                  ))}
                  <td class="num derived-cell">{row.value === null ? 'no value' : formatValue(row.value)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const formatValue = (n: number) => (Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6))));
