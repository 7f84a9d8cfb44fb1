// One monitor at /monitors/:id: its state, rule, instances, the rule over the last 7 days and its
// history of state changes; mute (1 hour, 1 day, until a chosen time) and unmute, pause and resume,
// edit (?edit) and delete. /monitors/new is the form for a new one.
import { useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { useLoad, useTitle } from '../lib/hooks';
import { Link, navigate, useLocation } from '../lib/router';
import { loadSources, sourceLabel } from '../lib/sources';
import {
  channelIds,
  describeRule,
  instanceName,
  isMuted,
  loadChannels,
  ruleLines,
  shownState,
  type Channel,
  type HistoryEntry,
  type Monitor,
  type Preview,
  writableOf,
} from '../lib/monitors';
import { isoSeconds } from '../lib/view';
import type { Source } from '../lib/types';
import { ConfirmButton, ErrorNotice, Skeleton } from '../components';
import { Dialog, formatAgo, formatValue, formatWhen, StateBadge } from './monitors-parts';
import { MonitorForm } from './monitors-form';
import { useRole } from './members';
import { PREVIEW_DAYS, PreviewChart, previewSentence } from './monitors-preview';

interface Loaded {
  monitor: Monitor | null;
  sources: Source[];
  channels: Channel[];
}

async function load(id: string, signal: AbortSignal): Promise<Loaded> {
  const [monitor, sources, channels] = await Promise.all([
    id === 'new' ? Promise.resolve(null) : get<Monitor>(`/monitors/${id}`, { signal }),
    loadSources(signal),
    // Without the channels API the form still works (it lists none).
    loadChannels(signal).catch(() => [] as Channel[]),
  ]);
  return { monitor, sources, channels };
}

export function MonitorPage({ id }: { id: string }) {
  const loc = useLocation();
  const editor = useRole('editor');
  const editing = editor && (id === 'new' || loc.query.has('edit'));
  const loaded = useLoad((signal) => load(id, signal), [id, editing]);
  const monitor = loaded.data?.monitor ?? null;
  useTitle(
    id === 'new' ? 'New monitor' : monitor ? (editing ? `Edit ${monitor.name}` : monitor.name) : 'Monitor',
  );
  if (loaded.error)
    return (
      <main>
        <ErrorNotice message={loaded.error} />
        <p>
          <Link href="/monitors">Back to the monitors</Link>
        </p>
      </main>
    );
  // Data of another page (the form before it saved, another monitor) waits for this one's.
  const stale = id === 'new' ? monitor !== null : monitor?.id !== id;
  if (!loaded.data || stale)
    return (
      <main>
        <Skeleton lines={4} />
      </main>
    );
  const { sources, channels } = loaded.data;
  if (editing) {
    return (
      <main>
        <div class="page-head">
          <h1>{monitor ? `Edit ${monitor.name}` : 'New monitor'}</h1>
          <Link href="/monitors">All monitors</Link>
        </div>
        {sources.length === 0 ? (
          <div class="notice">
            A monitor watches a source's metrics: <Link href="/sources">create a project</Link> first.
          </div>
        ) : monitor?.locked ? (
          <div class="notice">This monitor is locked; unlock it through the API to change it.</div>
        ) : monitor && monitor.type === 'report' ? (
          <div class="notice">
            A report monitor (a dashboard's data on a schedule) is changed through the API; this form edits
            alert monitors.
          </div>
        ) : (
          <MonitorForm key={monitor?.id ?? 'new'} initial={monitor} sources={sources} channels={channels} />
        )}
      </main>
    );
  }
  if (!monitor)
    return (
      <main>
        <div class="notice">Viewers read monitors; an editor creates them.</div>
      </main>
    );
  return (
    <MonitorView
      monitor={monitor}
      sources={sources}
      channels={channels}
      editor={editor}
      onChange={loaded.setData}
    />
  );
}

function MonitorView({
  monitor: m,
  sources,
  channels,
  editor,
  onChange,
}: {
  monitor: Monitor;
  sources: Source[];
  channels: Channel[];
  /** may change it (an editor of the organization) */
  editor: boolean;
  onChange: (data: Loaded) => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [muting, setMuting] = useState(false);
  const [tick, setTick] = useState(0);
  const now = Date.now();
  const state = shownState(m, now);
  const source = sources.find((s) => s.id === m.source_id);
  const timeZone = source?.time_zone ?? 'UTC';
  const act = (work: () => Promise<Monitor | null | undefined>) => {
    setError(null);
    work().then(
      async (next) => {
        onChange({ monitor: next ?? (await get<Monitor>(`/monitors/${m.id}`)), sources, channels });
        setTick((n) => n + 1);
      },
      (err: Error) => setError(err.message),
    );
  };
  const history = useLoad(
    (signal) => get<HistoryEntry[]>(`/monitors/${m.id}/history?limit=100`, { signal }),
    [m.id, tick],
  );
  const preview = useLoad(
    (signal) => {
      const to = Date.now();
      return api<Preview>(
        'POST',
        '/monitors/preview',
        { ...writableOf(m), from: isoSeconds(to - PREVIEW_DAYS * 86_400_000), to: isoSeconds(to) },
        { signal },
      );
    },
    [m.updated_at ?? m.id],
  );
  const names = channelIds(m).map((id) => channels.find((c) => c.id === id)?.name ?? id);
  const instances = m.instances ?? [];
  const muted = isMuted(m, now);

  return (
    <main data-monitor-id={m.id}>
      <div class="page-head">
        <h1>{m.name}</h1>
        <StateBadge state={state} />
        {editor && (
          <>
            {m.locked || m.type === 'report' ? (
              <span class="badge" title="Change it through the API">
                {m.locked ? 'locked' : 'report'}
              </span>
            ) : (
              <Link class="button" href={`/monitors/${m.id}?edit`}>
                Edit
              </Link>
            )}
            {muted ? (
              <button
                type="button"
                onClick={() => act(() => api<Monitor>('DELETE', `/monitors/${m.id}/mute`))}
              >
                Unmute
              </button>
            ) : (
              <button type="button" aria-haspopup="dialog" onClick={() => setMuting(true)}>
                Mute…
              </button>
            )}
            <button
              type="button"
              onClick={() =>
                act(() =>
                  api<Monitor>('PUT', `/monitors/${m.id}`, {
                    status: m.status === 'paused' ? 'active' : 'paused',
                  }),
                )
              }
            >
              {m.status === 'paused' ? 'Resume' : 'Pause'}
            </button>
            {!m.locked && (
              <ConfirmButton
                label="Delete"
                confirm={`Delete ${m.name}`}
                onConfirm={() =>
                  api('DELETE', `/monitors/${m.id}`).then(
                    () => navigate('/monitors'),
                    (err: Error) => setError(err.message),
                  )
                }
              />
            )}
          </>
        )}
      </div>
      <ErrorNotice message={error} />
      {muted && (
        <div class="notice">
          Muted until {formatWhen(m.muted_until)}: evaluated and recorded, not notified.
        </div>
      )}
      {m.status === 'paused' && <div class="notice">Paused: not evaluated until resumed.</div>}
      <div class="monitor-detail">
        <section class="panel" aria-label="Rule">
          <header>
            <h2>Rule</h2>
          </header>
          <dl class="panel-body facts">
            {m.description && (
              <>
                <dt>About</dt>
                <dd>{m.description}</dd>
              </>
            )}
            <dt>Watches</dt>
            <dd>
              <code>{m.alert_metric_key}</code>
              {m.alert_metric_path && (
                <>
                  {' · '}
                  <code>{m.alert_metric_path}</code>
                </>
              )}
              {source && <span class="muted"> in {sourceLabel(source)}</span>}
            </dd>
            <dt>Fires when</dt>
            <dd>
              {m.alerts.map((r, i) => (
                <div key={r.id ?? i}>
                  <span class="rule-text">{describeRule(r)}</span>
                  {r.settings.treat_missing_as_zero ? ' (missing as zero)' : ''}
                  {r.last_summary && <div class="muted">{r.last_summary}</div>}
                </div>
              ))}
            </dd>
            <dt>Window</dt>
            <dd>
              last {m.alert_timeframe} in {m.alert_granularity} buckets
              {m.for && m.for !== '0m' && m.for !== '0s' ? `, holding for ${m.for}` : ''}
            </dd>
            <dt>Notifies</dt>
            <dd>
              {names.length ? names.join(', ') : <span class="muted">no channel (history only)</span>}
              {m.repeat_every ? `; again every ${m.repeat_every} while firing` : ''}
              {m.notify_recovery === false ? '; not on recovery' : '; and on recovery'}
              {m.notify_no_data ? '; and when data stops' : ''}
            </dd>
          </dl>
        </section>
        <section class="panel monitor-preview" aria-label="Last 7 days">
          <header>
            <h2>Last {PREVIEW_DAYS} days</h2>
          </header>
          <div class="panel-body stack">
            {preview.error && <p class="muted">No chart: {preview.error}</p>}
            {!preview.data && preview.loading && <div class="skeleton preview__plot" aria-hidden="true" />}
            {preview.data && (
              <>
                <p class="preview__summary" data-testid="preview-summary">
                  {previewSentence(preview.data).replace(/^would/, 'Would')}.
                </p>
                <PreviewChart
                  preview={preview.data}
                  lines={ruleLines(m.alerts[0])}
                  granularity={m.alert_granularity}
                  timeZone={timeZone}
                  label={`${m.alert_metric_key} ${m.alert_metric_path ?? ''} over the last ${PREVIEW_DAYS} days`}
                />
              </>
            )}
          </div>
        </section>
      </div>
      {instances.length > 0 && (
        <section class="panel" aria-label="Instances">
          <header>
            <h2>{instances.length === 1 ? 'Current value' : `Instances (${instances.length})`}</h2>
          </header>
          <div class="scroll" tabIndex={0} aria-label="Instances table">
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">State</th>
                  <th scope="col">Instance</th>
                  <th scope="col" class="num">
                    Last value
                  </th>
                  <th scope="col">Since</th>
                  <th scope="col">Evaluated</th>
                </tr>
              </thead>
              <tbody>
                {instances.map((i) => (
                  <tr key={i.key}>
                    <td>
                      <StateBadge state={i.state} />
                    </td>
                    <td>{instanceName(i.labels, i.key)}</td>
                    <td class="num">{formatValue(i.last_value)}</td>
                    <td class="nowrap">{formatWhen(i.since)}</td>
                    <td>{formatAgo(i.last_evaluated_at, now)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <section class="panel" aria-label="History">
        <header>
          <h2>History</h2>
        </header>
        <ErrorNotice message={history.error} />
        {!history.data && history.loading && (
          <div class="panel-body">
            <Skeleton lines={2} />
          </div>
        )}
        {history.data && history.data.length === 0 && <p class="panel-body muted">No state changes yet.</p>}
        {history.data && history.data.length > 0 && (
          <div class="scroll" tabIndex={0} aria-label="History table">
            <table class="data history">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Instance</th>
                  <th scope="col">Change</th>
                  <th scope="col" class="num">
                    Value
                  </th>
                  <th scope="col">Summary</th>
                </tr>
              </thead>
              <tbody>
                {history.data.map((h, i) => (
                  <tr key={`${h.at}-${i}`}>
                    <td class="nowrap">{formatWhen(h.at)}</td>
                    <td>
                      {typeof h.instance === 'string'
                        ? h.instance
                        : h.instance
                          ? instanceName(h.instance)
                          : ''}
                    </td>
                    <td class="change">
                      <StateBadge state={asState(h.from)} /> → <StateBadge state={asState(h.to)} />
                    </td>
                    <td class="num">{formatValue(h.value)}</td>
                    <td>{h.summary ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {muting && (
        <MuteDialog
          onClose={() => setMuting(false)}
          onMute={(until) => {
            setMuting(false);
            act(() => api<Monitor>('POST', `/monitors/${m.id}/mute`, { until }));
          }}
        />
      )}
    </main>
  );
}

const KNOWN = ['ok', 'pending', 'firing', 'nodata', 'error', 'muted', 'paused'] as const;
const asState = (s: string) => {
  const lower = String(s ?? '')
    .toLowerCase()
    .replace(/[^a-z]/g, '');
  return (KNOWN as readonly string[]).includes(lower) ? (lower as (typeof KNOWN)[number]) : 'ok';
};

/** Mute for an hour, a day, or until a chosen time. */
function MuteDialog({ onClose, onMute }: { onClose: () => void; onMute: (until: string) => void }) {
  // datetime-local reads and writes the browser's own wall clock.
  const local = (ms: number) =>
    new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const [custom, setCustom] = useState(() => local(Date.now() + 4 * 3_600_000));
  const [problem, setProblem] = useState<string | null>(null);
  const at = (ms: number) => new Date(ms).toISOString();
  return (
    <Dialog title="Mute notifications" onClose={onClose}>
      <div class="stack">
        <p class="muted form-note">
          While muted the monitor is still evaluated and its history recorded; nothing is sent.
        </p>
        <div class="row">
          <button type="button" onClick={() => onMute(at(Date.now() + 3_600_000))}>
            1 hour
          </button>
          <button type="button" onClick={() => onMute(at(Date.now() + 86_400_000))}>
            1 day
          </button>
        </div>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            const ms = new Date(custom).getTime();
            if (!Number.isFinite(ms) || ms <= Date.now()) {
              setProblem('Choose a time in the future.');
              return;
            }
            onMute(at(ms));
          }}
        >
          <label class="field">
            Until (your local time)
            <input
              type="datetime-local"
              value={custom}
              aria-describedby={problem ? 'mute-problem' : undefined}
              onInput={(e) => setCustom((e.target as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="primary">
            Mute until then
          </button>
        </form>
        {problem && (
          <p class="error-text" id="mute-problem" role="alert">
            {problem}
          </p>
        )}
      </div>
    </Dialog>
  );
}
