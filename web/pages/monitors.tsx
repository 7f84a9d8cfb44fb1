// The Monitors page: every monitor of the organization with its state (what needs attention
// first), its rule, its last value and, for a key pattern, one row per matching key; links to a
// monitor's page, to a new monitor and to the channels.
import { useLoad, useTitle } from '../lib/hooks';
import { Link } from '../lib/router';
import { loadSources, sourceLabel } from '../lib/sources';
import {
  describeRule,
  instanceName,
  isMuted,
  loadMonitors,
  shownState,
  STATE_RANK,
  type Monitor,
} from '../lib/monitors';
import { ErrorNotice, Skeleton } from '../components';
import { formatAgo, formatValue, formatWhen, StateBadge } from './monitors-parts';
import type { Source } from '../lib/types';
import { useRole } from './members';

async function loadList(signal: AbortSignal): Promise<{ monitors: Monitor[]; sources: Source[] }> {
  const [monitors, sources] = await Promise.all([loadMonitors(signal), loadSources(signal)]);
  return { monitors, sources };
}

/** The value shown on the monitor's row: its one instance's, or the worst instance's. */
function lastValue(m: Monitor): number | null {
  const list = m.instances ?? [];
  if (list.length === 0) return null;
  const worst = [...list].sort((a, b) => STATE_RANK[a.state] - STATE_RANK[b.state])[0]!;
  return worst.last_value;
}

export function MonitorsPage() {
  useTitle('Monitors');
  // Viewers read monitors; editors change them (the API refuses the rest).
  const editor = useRole('editor');
  const list = useLoad(loadList, []);
  const now = Date.now();
  const monitors = [...(list.data?.monitors ?? [])].sort(
    (a, b) => STATE_RANK[shownState(a, now)] - STATE_RANK[shownState(b, now)] || a.name.localeCompare(b.name),
  );
  const counts = new Map<string, number>();
  for (const m of monitors) counts.set(shownState(m, now), (counts.get(shownState(m, now)) ?? 0) + 1);
  return (
    <main>
      <div class="page-head">
        <h1>Monitors</h1>
        {monitors.length > 0 && (
          <span class="muted" data-testid="monitor-counts">
            {['firing', 'pending', 'error', 'nodata', 'muted', 'ok', 'paused']
              .filter((s) => counts.get(s))
              .map((s) => `${counts.get(s)} ${s === 'nodata' ? 'no data' : s}`)
              .join(' · ')}
          </span>
        )}
        <Link class="button" href="/channels">
          Channels
        </Link>
        {editor && (
          <Link class="button primary" href="/monitors/new">
            New monitor
          </Link>
        )}
      </div>
      <ErrorNotice message={list.error} />
      {!list.data && list.loading && <Skeleton lines={4} />}
      {list.data && monitors.length === 0 && (
        <div class="notice">
          No monitors yet. A monitor watches one path of a key and notifies your channels when a rule holds.{' '}
          {editor ? <Link href="/monitors/new">Create the first one.</Link> : 'An editor creates them.'}
        </div>
      )}
      {monitors.length > 0 && (
        <section class="panel" aria-label="Monitors">
          <ul class="list monitors">
            {monitors.map((m) => (
              <MonitorRow
                key={m.id}
                monitor={m}
                source={list.data!.sources.find((s) => s.id === m.source_id)}
                now={now}
              />
            ))}
          </ul>
        </section>
      )}
    </main>
  );
}

function MonitorRow({ monitor: m, source, now }: { monitor: Monitor; source?: Source; now: number }) {
  const state = shownState(m, now);
  const instances = m.instances ?? [];
  // A key pattern evaluates per matching key: each gets its own row.
  const perInstance = instances.length > 1 || instances.some((i) => Object.keys(i.labels ?? {}).length > 0);
  return (
    <li class="monitor-row" data-monitor={m.name} data-state={state}>
      <div class="monitor-row__main">
        <StateBadge
          state={state}
          title={
            state === 'muted'
              ? `Muted until ${formatWhen(m.muted_until)}`
              : state === 'paused'
                ? 'Paused: not evaluated'
                : undefined
          }
        />
        <div class="monitor-row__text">
          <Link class="name" href={`/monitors/${m.id}`}>
            {m.name}
          </Link>
          <div class="meta">
            <code>{m.alert_metric_key}</code>
            {m.alert_metric_path ? (
              <>
                {' · '}
                <code>{m.alert_metric_path}</code>
              </>
            ) : null}
            {' · '}
            {describeRule(m.alerts[0])}
            {m.alerts.length > 1 && ` (+${m.alerts.length - 1} rules)`}
            {source && ` · ${sourceLabel(source)}`}
            {isMuted(m, now) && m.status !== 'paused' && ` · muted until ${formatWhen(m.muted_until)}`}
          </div>
        </div>
        {!perInstance && (
          <div class="monitor-row__value" title="Last value">
            <span class="visually-hidden">Last value </span>
            {formatValue(lastValue(m))}
            <span class="meta">{formatAgo(instances[0]?.last_evaluated_at, now)}</span>
          </div>
        )}
      </div>
      {perInstance && (
        <ul class="instances" aria-label={`Instances of ${m.name}`}>
          {instances.map((i) => (
            <li key={i.key} data-instance={i.key}>
              <StateBadge state={m.status === 'paused' ? 'paused' : isMuted(m, now) ? 'muted' : i.state} />
              <span class="instances__name">{instanceName(i.labels, i.key)}</span>
              <span class="meta">{i.since ? `since ${formatWhen(i.since)}` : ''}</span>
              <span class="instances__value">{formatValue(i.last_value)}</span>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}
