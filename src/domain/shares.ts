// Read-only share links of a dashboard (SPEC 10): a random token of its own in the link's path,
// stored hashed; it reads that dashboard and the series of its key (with its segments' values)
// and nothing else, without signing in; the organization's users list and revoke links.
import { randomBytes } from 'node:crypto';
import vm from 'node:vm';
import type { Ports } from './ports';
import { badRequest, notFound } from '../errors';
import { newId, normalizeId } from '../lib/ids';
import { captureGroups, substituteKey } from '../shared/key-segments';
import { hashToken } from '../lib/tokens';
import type { ShareRow, SharesRepo } from '../storage/shares';
import type { Dashboard } from '../model/dashboard';
import { SYSTEM_KEY } from './metrics/merge';
import type { Source, UserAuth } from './types';

const SHARE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

type ShareDeps = Pick<Ports, 'dashboards' | 'sources' | 'shares' | 'now'>;

/** A dashboard of the user's organization (hidden ones included), or 404. */
async function ownDashboard(deps: ShareDeps, auth: UserAuth, rawId: string): Promise<Dashboard> {
  const id = normalizeId(rawId);
  const dashboard =
    id && auth.organizationId ? await deps.dashboards.byId(id, auth.organizationId) : undefined;
  if (!dashboard) throw notFound();
  return dashboard;
}

export async function createShare(
  deps: ShareDeps,
  auth: UserAuth,
  rawDashboardId: string,
): Promise<{ row: ShareRow; value: string }> {
  const dashboard = await ownDashboard(deps, auth, rawDashboardId);
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
  if (!(await deps.shares.insert(row))) throw notFound(); // the dashboard was deleted meanwhile
  return { row, value };
}

export async function listShares(
  deps: ShareDeps,
  auth: UserAuth,
  rawDashboardId: string,
): Promise<ShareRow[]> {
  const dashboard = await ownDashboard(deps, auth, rawDashboardId);
  return deps.shares.listByDashboard(dashboard.id, dashboard.organizationId);
}

export async function revokeShare(
  deps: ShareDeps,
  auth: UserAuth,
  rawDashboardId: string,
  rawShareId: string,
): Promise<void> {
  const dashboard = await ownDashboard(deps, auth, rawDashboardId);
  const id = normalizeId(rawShareId);
  if (!id || !(await deps.shares.remove(id, dashboard.id, dashboard.organizationId))) throw notFound();
}

/** The dashboard and source of a link; an unknown or revoked link, or a hidden dashboard, is 404. */
export async function resolveShare(
  deps: ShareDeps,
  token: string,
): Promise<{ dashboard: Dashboard; source: Source }> {
  const row = SHARE_TOKEN.test(token) ? await deps.shares.byHash(hashToken(token)) : undefined;
  const dashboard = row ? await deps.dashboards.byId(row.dashboard_id, row.organization_id) : undefined;
  const source = dashboard?.visibility ? await deps.sources.cachedById(dashboard.sourceId) : undefined;
  if (!dashboard || !source) throw notFound();
  return { dashboard, source };
}

interface StoredSegment {
  name: string;
  type?: string;
  default_value?: string | null;
  groups?: { items?: { value: string; default?: boolean }[] }[];
}

/** Time a segment's pattern may take on one value before the value is refused. */
const PATTERN_BUDGET_MS = 250;
/** One context for every pattern check: a pattern that backtracks without end is stopped by the timeout. */
const patternContext = vm.createContext(Object.create(null) as object);
const patternTest = new vm.Script('pattern.test(value)');

/** Does `value` match the whole of a capture group's own pattern (`(?<country>[A-Z]{2})`)? */
function matchesGroup(group: string, value: string): boolean {
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^(?:${group})$`, 'u');
  } catch {
    try {
      pattern = new RegExp(`^(?:${group})$`);
    } catch {
      return false; // a key that is no pattern accepts no value
    }
  }
  const sandbox = patternContext as { pattern?: RegExp; value?: string };
  sandbox.pattern = pattern;
  sandbox.value = value;
  try {
    return patternTest.runInContext(patternContext, { timeout: PATTERN_BUDGET_MS }) === true;
  } catch {
    return false; // too slow: the value is refused, the service keeps serving
  } finally {
    delete sandbox.pattern;
    delete sandbox.value;
  }
}

/**
 * The text a key reads as once its spelling tricks are undone: `%`-escapes decoded (repeatedly),
 * Unicode look-alikes folded (NFKC), whitespace and invisible format characters dropped, lower case.
 */
export function normalizedKey(key: string): string {
  let text = key;
  for (let i = 0; i < 4; i++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      break;
    }
    if (decoded === text) break;
    text = decoded;
  }
  return text
    .normalize('NFKC')
    .replace(/[\p{White_Space}\p{Cf}]/gu, '')
    .toLowerCase();
}

/**
 * Is the key the system key, or does it hold it (as one of its `::` segments or anywhere else),
 * however it is spelled? Refusing every key that holds it leaves no spelling to find.
 */
export function reachesSystemKey(key: string): boolean {
  return normalizedKey(key).includes(SYSTEM_KEY);
}

/** The capture group each segment fills: its named group, else the next unnamed one (as substituteKey). */
function groupsBySegment(key: string, names: string[]): Map<string, string> {
  const groups = captureGroups(key);
  const named = new Set(groups.map((g) => g.name).filter((n): n is string => n !== null));
  const remaining = names.filter((name) => !named.has(name));
  const out = new Map<string, string>();
  for (const group of groups) {
    const name = group.name ?? remaining.shift();
    if (name !== undefined && !out.has(name)) out.set(name, key.slice(group.start, group.end));
  }
  return out;
}

/**
 * The key a shared dashboard reads for the given `s.<name>` values: a select segment takes one of
 * its items (else 400), a text segment a value that matches the whole of its capture group's
 * pattern (else 400); missing values take the segment's default, as in the interface. The system
 * key is never readable through a link, however it is spelled (404).
 */
export function sharedKey(dashboard: Dashboard, query: Record<string, unknown>): string {
  const segments = dashboard.segments as StoredSegment[];
  const groups = groupsBySegment(
    dashboard.key,
    segments.map((s) => s.name),
  );
  const values: Record<string, string> = {};
  for (const segment of segments) {
    const items = (segment.groups ?? []).flatMap((g) => g.items ?? []);
    const given = query[`s.${segment.name}`];
    const fallback = segment.default_value ?? items.find((i) => i.default)?.value ?? items[0]?.value ?? '';
    const value = typeof given === 'string' ? given : fallback;
    const group = groups.get(segment.name);
    const allowed =
      segment.type === 'text'
        ? value === '' ||
          (value.length <= 255 && !value.includes('::') && group !== undefined && matchesGroup(group, value))
        : items.some((i) => i.value === value) || (items.length === 0 && value === '');
    if (!allowed) throw badRequest(`Unknown value for segment ${segment.name}`);
    if (reachesSystemKey(value)) throw notFound();
    values[segment.name] = value;
  }
  const key = substituteKey(
    dashboard.key,
    segments.map((s) => s.name),
    values,
  );
  if (reachesSystemKey(key)) throw notFound();
  return key;
}
