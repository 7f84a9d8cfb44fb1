// Dashboards from templates (src/shared/dashboard-templates.ts) in a source's "Send data" section:
// a template is offered once the source holds keys it reads (the keys Explore lists: the system key
// over the last 7 days); creating it makes a dashboard group of the template's name with one
// dashboard per matched part (POST /api/v1/dashboard-groups, then POST /api/v1/dashboards each).
import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { keyCounts } from '../lib/explore-data';
import { useLoad } from '../lib/hooks';
import { Link } from '../lib/router';
import { fetchSeries } from '../lib/series';
import type { Dashboard, Source } from '../lib/types';
import { fitGranularity } from '../lib/view';
import {
  DASHBOARD_TEMPLATES,
  matchTemplate,
  templateBody,
  type DashboardTemplate,
  type TemplateMatch,
} from '../../src/shared/dashboard-templates';
import { ErrorNotice } from '../components';
import { useRole } from './members';

const SYSTEM_KEY = '__system__key__';
const WEEK_MS = 7 * 86_400_000;

/** The keys the source wrote in the last 7 days, as Explore lists them. */
async function recentKeys(source: Source, signal: AbortSignal): Promise<string[]> {
  const to = Date.now();
  const from = to - WEEK_MS;
  const granularity = fitGranularity(source.granularities, null, WEEK_MS, 400);
  const system = await fetchSeries(source.id, SYSTEM_KEY, { from, to, granularity }, signal);
  return keyCounts(system).keys.map((k) => k.key);
}

function Offer({
  source,
  template,
  matches,
}: {
  source: Source;
  template: DashboardTemplate;
  matches: TemplateMatch[];
}) {
  const editor = useRole('editor');
  const [made, setMade] = useState<Dashboard[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      const group = await api<{ id: string }>('POST', '/dashboard-groups', {
        name: `${template.name} · ${source.display_name}`.slice(0, 255),
      });
      const out: Dashboard[] = [];
      for (const match of matches) {
        out.push(
          await api<Dashboard>(
            'POST',
            '/dashboards',
            templateBody(match, { type: source.type, id: source.id }, group.id),
          ),
        );
      }
      setMade(out);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const missing = template.dashboards.filter((d) => !matches.some((m) => m.dashboard === d));
  return (
    <li data-template={template.id} style={{ flexWrap: 'wrap' }}>
      <span class="name">{template.name}</span>
      <span class="meta" style={{ flex: '1 1 260px' }}>
        {matches
          .map((m) => `${m.dashboard.name.replace(/^.* · /, '')} (${m.items.map((i) => i.label).join(', ')})`)
          .join(' · ')}
        {missing.length > 0 &&
          ` · no data yet for ${missing.map((d) => d.name.replace(/^.* · /, '')).join(', ')}`}
      </span>
      <span class="actions">
        {made ? (
          <span class="row" role="status">
            Created:
            {made.map((d) => (
              <Link key={d.id} href={`/d/${d.id}`}>
                {d.name}
              </Link>
            ))}
          </span>
        ) : editor ? (
          <button type="button" disabled={busy} onClick={() => void create()}>
            Create {matches.length === 1 ? 'dashboard' : `${matches.length} dashboards`}
            <span class="visually-hidden"> from {template.name}</span>
          </button>
        ) : (
          <span class="muted">an editor can create them</span>
        )}
      </span>
      {error && (
        <div class="error-text" role="alert" style={{ flexBasis: '100%' }}>
          {error}
        </div>
      )}
    </li>
  );
}

export function IntakeTemplates({ source }: { source: Source }) {
  const keys = useLoad((signal) => recentKeys(source, signal), [source.id]);
  const offers = DASHBOARD_TEMPLATES.map((template) => ({
    template,
    matches: matchTemplate(template, keys.data ?? []),
  })).filter((o) => o.matches.length > 0);
  return (
    <div class="stack" style={{ gap: 'var(--space-2)' }}>
      <div class="row">
        <h3 style={{ margin: 0, flex: 1 }}>Dashboards from templates</h3>
        <button type="button" onClick={keys.reload} disabled={keys.loading}>
          Look again
        </button>
      </div>
      <ErrorNotice message={keys.error} />
      {keys.data && offers.length === 0 && (
        <p class="muted" style={{ margin: 0 }}>
          Ready-made dashboards for {DASHBOARD_TEMPLATES.map((t) => t.name).join(' and ')} appear here once
          their data has arrived in the last 7 days ({DASHBOARD_TEMPLATES.map((t) => t.sender).join('; ')}).
        </p>
      )}
      {offers.length > 0 && (
        <ul class="list" aria-label="Dashboard templates">
          {offers.map((o) => (
            <Offer key={o.template.id} source={source} template={o.template} matches={o.matches} />
          ))}
        </ul>
      )}
    </div>
  );
}
