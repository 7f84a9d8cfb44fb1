// Dashboard rules (SPEC 6): organization scope, visibility, locking, defaults and the checks that
// need the database. Order of answers for a change: 404 (unknown or another organization's) ->
// 409 (locked) -> 422 (every broken field at once).
import { conflict, notFound } from '../../errors';
import { newId, normalizeId } from '../../lib/ids';
import type { DashboardsRepo } from '../../storage/dashboards';
import type { Auth, Source } from '../types';
import { ErrorBag } from './issues';
import { normalizeSegments } from './segments';
import { SOURCE_FIELDS, type SourceFields, type SourceLookup, selectSource } from './source-selection';
import type { Dashboard } from '../../model/dashboard';
import { checkSentDocuments, checkStoredSize } from './limits';
import { normalizePayload } from './widgets';
import { type ExpectedVersion, checkChangeable, nextUpdatedAt } from './versions';

export interface DashboardsContext {
  dashboards: DashboardsRepo;
  sources: SourceLookup & { byId(id: string): Source | undefined };
  projectsEnabled: boolean;
  now: () => number;
  /** a user's name (or email) for a refused stale save; undefined when unknown */
  nameOf?: (userId: string) => Promise<string | undefined>;
}

/** Fields a create or an update may carry, after their types were checked. */
export interface DashboardInput extends SourceFields {
  name?: string;
  key?: string;
  visibility?: boolean;
  locked?: boolean;
  position?: number;
  default_timeframe?: string;
  default_granularity?: string;
  group_id?: string | null;
  payload?: unknown;
  segments?: unknown;
}

// The same words as the bootstrap endpoints that need an organization.
export const NO_ORGANIZATION =
  'User has no organization: create one with POST /api/v1/bootstrap/organizations';
export const LOCKED = 'Dashboard is locked';

// A page stops early once its stored documents pass this many bytes (at least one dashboard is
// always served): 1,000 dashboards of 256 KiB would otherwise make one 256 MB answer.
export const PAGE_MAX_BYTES = 8 * 1024 * 1024;

export interface DashboardPage {
  dashboards: Dashboard[];
  /** visible dashboards of the organization, all pages */
  total: number;
}

/** A page of the visible dashboards of the token's organization; none for a user without one. */
export function listDashboards(
  ctx: DashboardsContext,
  auth: Auth,
  limit: number,
  offset: number,
): DashboardPage {
  const organizationId = auth.organizationId;
  if (!organizationId) return { dashboards: [], total: 0 };
  return {
    dashboards: ctx.dashboards.listVisible(organizationId, limit, offset, PAGE_MAX_BYTES),
    total: ctx.dashboards.countVisible(organizationId),
  };
}

/** Any dashboard of the organization, hidden ones included, or 404. */
export function findDashboard(ctx: DashboardsContext, auth: Auth, rawId: string): Dashboard {
  const id = normalizeId(rawId);
  const found = id && auth.organizationId ? ctx.dashboards.byId(id, auth.organizationId) : undefined;
  if (!found) throw notFound();
  return found;
}

/** GET: hidden dashboards are 404 like unknown ones. */
export function showDashboard(ctx: DashboardsContext, auth: Auth, rawId: string): Dashboard {
  const dashboard = findDashboard(ctx, auth, rawId);
  if (!dashboard.visibility) throw notFound();
  return dashboard;
}

/**
 * PUT/DELETE target: 404, then 409 unless the request unlocks it, then 409 when the request names
 * a version (`updated_at` or If-Match) that is no longer the stored one.
 */
export async function findChangeable(
  ctx: DashboardsContext,
  auth: Auth,
  rawId: string,
  unlocks: boolean,
  expected: ExpectedVersion = {},
): Promise<Dashboard> {
  const dashboard = findDashboard(ctx, auth, rawId);
  await checkChangeable(dashboard, unlocks, expected, LOCKED, 'This dashboard', async (id) =>
    ctx.nameOf?.(id),
  );
  return dashboard;
}

export function createDashboard(
  ctx: DashboardsContext,
  auth: Auth,
  input: DashboardInput,
  bag: ErrorBag,
): Dashboard {
  const organizationId = auth.organizationId;
  if (!organizationId) throw conflict(NO_ORGANIZATION);
  // A field already reported (sent but broken) is not also "required".
  if (input.name === undefined && !bag.has('name')) bag.add('name', 'is required');
  if (input.key === undefined && !bag.has('key')) bag.add('key', 'is required');
  const source = selectSource(
    input,
    organizationId,
    ctx.sources,
    { projectsEnabled: ctx.projectsEnabled, keptProjectId: null },
    bag,
  );
  if (source === undefined && !SOURCE_FIELDS.some((field) => bag.has(field))) {
    bag.add('source', 'is required: send source {type, id}, source_type and source_id, or database_id');
  }
  const groupId = checkGroup(ctx, organizationId, input.group_id, bag);
  const granularity = checkGranularity(input.default_granularity, source ?? null, bag);
  const { payload, segments } = normalizeDocuments(input, { payload: {}, segments: [] }, bag);
  bag.throwIfAny();
  const chosen = source!;
  const now = ctx.now();
  const dashboard: Dashboard = {
    id: newId(),
    organizationId,
    userId: auth.userId,
    ...sourceColumns(chosen),
    groupId: groupId ?? null,
    name: input.name!,
    key: input.key!,
    visibility: input.visibility ?? true,
    locked: input.locked ?? false,
    position: input.position ?? -1,
    defaultTimeframe: input.default_timeframe ?? chosen.defaultTimeframe,
    defaultGranularity: granularity ?? chosen.defaultGranularity,
    payload,
    segments,
    insertedAt: now,
    updatedAt: now,
    updatedBy: auth.userId,
  };
  return insertDashboard(ctx, dashboard, input.position === undefined);
}

/** Inserts; `atEnd` places it at last + 1 (hidden dashboards count) in the same transaction. */
function insertDashboard(ctx: DashboardsContext, dashboard: Dashboard, atEnd: boolean): Dashboard {
  return ctx.dashboards.transaction(() => {
    const placed = atEnd
      ? { ...dashboard, position: (ctx.dashboards.lastPosition(dashboard.organizationId) ?? 0) + 1 }
      : dashboard;
    ctx.dashboards.insert(placed);
    return placed;
  });
}

/** Applies a PUT to a dashboard found with findChangeable. Only the fields sent change. */
export function updateDashboard(
  ctx: DashboardsContext,
  current: Dashboard,
  input: DashboardInput,
  bag: ErrorBag,
  userId: string | null = null,
  expected: ExpectedVersion = {},
): Dashboard {
  const organizationId = current.organizationId;
  const keptProjectId = current.sourceType === 'project' ? current.sourceId : null;
  const options = { projectsEnabled: ctx.projectsEnabled, keptProjectId };
  const selected = selectSource(input, organizationId, ctx.sources, options, bag);
  const source = selected === undefined ? (ctx.sources.byId(current.sourceId) ?? null) : selected;
  const groupId = checkGroup(ctx, organizationId, input.group_id, bag);
  const granularity = checkGranularity(input.default_granularity, source, bag);
  const { payload, segments } = normalizeDocuments(input, current, bag);
  bag.throwIfAny();
  const next: Dashboard = {
    ...current,
    ...(source ? sourceColumns(source) : {}),
    groupId: groupId === undefined ? current.groupId : groupId,
    name: input.name ?? current.name,
    key: input.key ?? current.key,
    visibility: input.visibility ?? current.visibility,
    locked: input.locked ?? current.locked,
    position: input.position ?? current.position,
    defaultTimeframe: input.default_timeframe ?? current.defaultTimeframe,
    defaultGranularity: granularity ?? keptGranularity(current, source),
    payload,
    segments,
    updatedAt: nextUpdatedAt(current, ctx.now()),
    updatedBy: userId,
  };
  ctx.dashboards.update(next);
  return next;
}

/** Deletes a dashboard found with findChangeable and returns it as it was. */
export function removeDashboard(ctx: DashboardsContext, dashboard: Dashboard): Dashboard {
  ctx.dashboards.remove(dashboard.id, dashboard.organizationId);
  return dashboard;
}

type Documents = Pick<Dashboard, 'payload' | 'segments'>;

/**
 * The documents to store: the sent ones normalised, the others kept. Size and widget count are
 * checked on what was sent before normalising (an oversized grid is not walked) and again on the
 * result, which holds the filled-in defaults.
 */
function normalizeDocuments(input: DashboardInput, kept: Documents, bag: ErrorBag): Documents {
  if (!checkSentDocuments({ payload: input.payload, segments: input.segments }, kept, bag)) return kept;
  const payload = input.payload === undefined ? kept.payload : normalizePayload(input.payload, bag);
  const segments = input.segments === undefined ? kept.segments : normalizeSegments(input.segments, bag);
  const sent = {
    payload: input.payload === undefined ? undefined : payload,
    segments: input.segments === undefined ? undefined : segments,
  };
  checkStoredSize(sent, kept, bag);
  return { payload, segments };
}

function sourceColumns(source: Source): Pick<Dashboard, 'sourceType' | 'sourceId' | 'databaseId'> {
  return {
    sourceType: source.type,
    sourceId: source.id,
    databaseId: source.type === 'database' ? source.id : null,
  };
}

/** `group_id`: undefined (not sent), null (ungroup) or a group of the organization. */
function checkGroup(
  ctx: DashboardsContext,
  organizationId: string,
  raw: string | null | undefined,
  bag: ErrorBag,
): string | null | undefined {
  if (raw === undefined || raw === null) return raw;
  const id = normalizeId(raw);
  if (id && ctx.dashboards.groupById(id, organizationId)) return id;
  bag.add('group_id', 'must be the id of a dashboard group of this organization, or null');
  return undefined;
}

/** A granularity sent must be one the source allows (checked once the source is known). */
function checkGranularity(raw: string | undefined, source: Source | null, bag: ErrorBag): string | undefined {
  if (raw === undefined || !source) return raw;
  if (source.granularities.includes(raw)) return raw;
  bag.add(
    'default_granularity',
    `must be one of the source's granularities: ${source.granularities.join(', ')}`,
  );
  return undefined;
}

// A new source that does not allow the current default granularity brings its own default.
function keptGranularity(current: Dashboard, source: Source | null): string {
  if (!source || source.granularities.includes(current.defaultGranularity)) return current.defaultGranularity;
  return source.defaultGranularity;
}
