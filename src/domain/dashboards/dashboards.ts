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
  sources: SourceLookup & { byId(id: string): Promise<Source | undefined> };
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
export async function listDashboards(
  ctx: DashboardsContext,
  auth: Auth,
  limit: number,
  offset: number,
): Promise<DashboardPage> {
  const organizationId = auth.organizationId;
  if (!organizationId) return { dashboards: [], total: 0 };
  return {
    dashboards: await ctx.dashboards.listVisible(organizationId, limit, offset, PAGE_MAX_BYTES),
    total: await ctx.dashboards.countVisible(organizationId),
  };
}

/** Any dashboard of the organization, hidden ones included, or 404. */
export async function findDashboard(ctx: DashboardsContext, auth: Auth, rawId: string): Promise<Dashboard> {
  const id = normalizeId(rawId);
  const found = id && auth.organizationId ? await ctx.dashboards.byId(id, auth.organizationId) : undefined;
  if (!found) throw notFound();
  return found;
}

/** GET: hidden dashboards are 404 like unknown ones. */
export async function showDashboard(ctx: DashboardsContext, auth: Auth, rawId: string): Promise<Dashboard> {
  const dashboard = await findDashboard(ctx, auth, rawId);
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
  const dashboard = await findDashboard(ctx, auth, rawId);
  await checkChangeable(dashboard, unlocks, expected, LOCKED, 'This dashboard', async (id) =>
    ctx.nameOf?.(id),
  );
  return dashboard;
}

/**
 * Creates a dashboard. Its source and group are checked, then checked again by the insert's own
 * transaction; when one went in between, everything is checked again (the answer is then the 422).
 */
export async function createDashboard(
  ctx: DashboardsContext,
  auth: Auth,
  input: DashboardInput,
  bag: ErrorBag,
): Promise<Dashboard> {
  for (let attempt = 1; ; attempt++) {
    const dashboard = await newDashboard(ctx, auth, input, bag);
    const placed = await ctx.dashboards.insert(dashboard, input.position === undefined);
    if (placed) return placed;
    if (attempt === RETRIES) throw conflict(CHANGED_MEANWHILE);
  }
}

/** Tries of a write conditioned on what was read before the answer is a 409 (never seen in practice). */
const RETRIES = 5;
export const CHANGED_MEANWHILE = 'The dashboard changed while it was being saved: retry';

async function newDashboard(
  ctx: DashboardsContext,
  auth: Auth,
  input: DashboardInput,
  bag: ErrorBag,
): Promise<Dashboard> {
  const organizationId = auth.organizationId;
  if (!organizationId) throw conflict(NO_ORGANIZATION);
  // A field already reported (sent but broken) is not also "required".
  if (input.name === undefined && !bag.has('name')) bag.add('name', 'is required');
  if (input.key === undefined && !bag.has('key')) bag.add('key', 'is required');
  const source = await selectSource(
    input,
    organizationId,
    ctx.sources,
    { projectsEnabled: ctx.projectsEnabled, keptProjectId: null },
    bag,
  );
  if (source === undefined && !SOURCE_FIELDS.some((field) => bag.has(field))) {
    bag.add('source', 'is required: send source {type, id}, source_type and source_id, or database_id');
  }
  const groupId = await checkGroup(ctx, organizationId, input.group_id, bag);
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
  return dashboard;
}

/**
 * PUT: findChangeable's checks, then the fields sent applied. The save is conditioned on the
 * version the checks read; when another save came in between, everything runs again on the new
 * version, as if the two requests had come one after the other.
 */
export async function saveDashboard(
  ctx: DashboardsContext,
  auth: Auth,
  rawId: string,
  unlocks: boolean,
  input: DashboardInput,
  bag: ErrorBag,
  userId: string | null = null,
  expected: ExpectedVersion = {},
): Promise<Dashboard> {
  for (let attempt = 1; ; attempt++) {
    const current = await findChangeable(ctx, auth, rawId, unlocks, expected);
    const next = await updateDashboard(ctx, current, input, bag, userId);
    if (await ctx.dashboards.update(next, current.updatedAt)) return next;
    if (attempt === RETRIES) throw conflict(CHANGED_MEANWHILE);
  }
}

/** The dashboard a PUT makes of one found with findChangeable (not saved). Only the fields sent change. */
async function updateDashboard(
  ctx: DashboardsContext,
  current: Dashboard,
  input: DashboardInput,
  bag: ErrorBag,
  userId: string | null,
): Promise<Dashboard> {
  const organizationId = current.organizationId;
  const keptProjectId = current.sourceType === 'project' ? current.sourceId : null;
  const options = { projectsEnabled: ctx.projectsEnabled, keptProjectId };
  const selected = await selectSource(input, organizationId, ctx.sources, options, bag);
  const source = selected === undefined ? ((await ctx.sources.byId(current.sourceId)) ?? null) : selected;
  const groupId = await checkGroup(ctx, organizationId, input.group_id, bag);
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
  return next;
}

/** DELETE: findChangeable's checks, then the delete, conditioned like saveDashboard's; returns it as it was. */
export async function removeDashboard(ctx: DashboardsContext, auth: Auth, rawId: string): Promise<Dashboard> {
  for (let attempt = 1; ; attempt++) {
    const dashboard = await findChangeable(ctx, auth, rawId, false);
    if (await ctx.dashboards.remove(dashboard.id, dashboard.organizationId, dashboard.updatedAt))
      return dashboard;
    if (attempt === RETRIES) throw conflict(CHANGED_MEANWHILE);
  }
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
async function checkGroup(
  ctx: DashboardsContext,
  organizationId: string,
  raw: string | null | undefined,
  bag: ErrorBag,
): Promise<string | null | undefined> {
  if (raw === undefined || raw === null) return raw;
  const id = normalizeId(raw);
  if (id && (await ctx.dashboards.groupById(id, organizationId))) return id;
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
