// Read-only share links of a dashboard (SPEC 10): a random token of its own in the link's path,
// stored hashed; it reads that dashboard and the series of its key (with its segments' values)
// and nothing else, without signing in; the organization's users list and revoke links.
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps';
import { badRequest, notFound } from '../errors';
import { newId, normalizeId } from '../lib/ids';
import { substituteKey } from '../lib/key-segments';
import { hashToken } from '../lib/tokens';
import type { ShareRow, SharesRepo } from '../storage/shares';
import type { Dashboard } from './dashboards/types';
import { SYSTEM_KEY } from './metrics/merge';
import type { Source, UserAuth } from './types';

const SHARE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

type ShareDeps = Pick<Deps, 'dashboards' | 'sources' | 'now'> & { shares: SharesRepo };

/** A dashboard of the user's organization (hidden ones included), or 404. */
function ownDashboard(deps: ShareDeps, auth: UserAuth, rawId: string): Dashboard {
  const id = normalizeId(rawId);
  const dashboard = id && auth.organizationId ? deps.dashboards.byId(id, auth.organizationId) : undefined;
  if (!dashboard) throw notFound();
  return dashboard;
}

export function createShare(deps: ShareDeps, auth: UserAuth, rawDashboardId: string): { row: ShareRow; value: string } {
  const dashboard = ownDashboard(deps, auth, rawDashboardId);
  const value = randomBytes(32).toString('base64url');
  const row: ShareRow = {
    id: newId(),
    dashboard_id: dashboard.id,
    organization_id: dashboard.organizationId,
    user_id: auth.userId,
    token_hash: hashToken(value),
    last5: value.slice(-5),
    created_at: deps.now(),
  };
  deps.shares.insert(row);
  return { row, value };
}

export function listShares(deps: ShareDeps, auth: UserAuth, rawDashboardId: string): ShareRow[] {
  const dashboard = ownDashboard(deps, auth, rawDashboardId);
  return deps.shares.listByDashboard(dashboard.id, dashboard.organizationId);
}

export function revokeShare(deps: ShareDeps, auth: UserAuth, rawDashboardId: string, rawShareId: string): void {
  const dashboard = ownDashboard(deps, auth, rawDashboardId);
  const id = normalizeId(rawShareId);
  if (!id || !deps.shares.remove(id, dashboard.id, dashboard.organizationId)) throw notFound();
}

/** The dashboard and source of a link; an unknown or revoked link, or a hidden dashboard, is 404. */
export function resolveShare(deps: ShareDeps, token: string): { dashboard: Dashboard; source: Source } {
  const row = SHARE_TOKEN.test(token) ? deps.shares.byHash(hashToken(token)) : undefined;
  const dashboard = row ? deps.dashboards.byId(row.dashboard_id, row.organization_id) : undefined;
  const source = dashboard?.visibility ? deps.sources.cachedById(dashboard.sourceId) : undefined;
  if (!dashboard || !source) throw notFound();
  return { dashboard, source };
}

interface StoredSegment {
  name: string;
  type?: string;
  default_value?: string | null;
  groups?: { items?: { value: string; default?: boolean }[] }[];
}

/**
 * The key a shared dashboard reads for the given `s.<name>` values: a select segment takes one of
 * its items (else 400), a text segment any value without the `::` separator; missing values take
 * the segment's default, as in the interface. The system key is never readable through a link.
 */
export function sharedKey(dashboard: Dashboard, query: Record<string, unknown>): string {
  const segments = dashboard.segments as StoredSegment[];
  const values: Record<string, string> = {};
  for (const segment of segments) {
    const items = (segment.groups ?? []).flatMap((g) => g.items ?? []);
    const given = query[`s.${segment.name}`];
    const fallback = segment.default_value ?? items.find((i) => i.default)?.value ?? items[0]?.value ?? '';
    const value = typeof given === 'string' ? given : fallback;
    const allowed = segment.type === 'text' ? value.length <= 255 && !value.includes('::') : items.some((i) => i.value === value) || (items.length === 0 && value === '');
    if (!allowed) throw badRequest(`Unknown value for segment ${segment.name}`);
    values[segment.name] = value;
  }
  const key = substituteKey(dashboard.key, segments.map((s) => s.name), values);
  if (key === SYSTEM_KEY) throw notFound();
  return key;
}
