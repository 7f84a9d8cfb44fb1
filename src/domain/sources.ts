// Project sources and the organization's source list (SPEC sections 4 and 7).
import type { Ports } from './ports';
import { conflict, forbidden, invalid, notFound } from '../errors';
import { normalizeId } from '../lib/ids';
import { newId } from '../lib/ids';
import type { Source, UserAuth } from './types';
import type { SourceSettings } from './source-settings';

export const PROJECTS_DISABLED = 'Projects are disabled for this deployment';

export interface ProjectInput {
  name: string;
  settings: SourceSettings;
  expireAfter: number | null;
  retention: Record<string, string> | null;
  projectClusterId: string | null;
}

/** 403 when the deployment runs without projects. */
export function assertProjectsEnabled(deps: Pick<Ports, 'config'>): void {
  if (!deps.config.features.projectsEnabled) throw forbidden(PROJECTS_DISABLED);
}

/** The token's organization, or 409: sources need one. */
export function requireOrganization(auth: UserAuth): string {
  if (auth.organizationId === null) {
    throw conflict('User has no organization: create one with POST /api/v1/bootstrap/organizations');
  }
  return auth.organizationId;
}

/** The columns every new source starts from. */
export function newSource(
  deps: Pick<Ports, 'now'>,
  organizationId: string,
  fields: Pick<Source, 'type' | 'displayName' | 'driver' | 'config' | 'setupStatus'> & {
    settings: SourceSettings;
  },
  id: string = newId(),
): Source {
  return {
    id,
    organizationId,
    type: fields.type,
    displayName: fields.displayName,
    driver: fields.driver,
    ...fields.settings,
    expireAfter: null,
    retention: null,
    projectClusterId: null,
    config: fields.config,
    setupStatus: fields.setupStatus,
    createdAt: deps.now(),
  };
}

/**
 * Creates a project. On a configured metrics cluster (SPEC 14) its schema is made there first, so
 * an unreachable cluster answers 503 and creates nothing; the cluster is recorded in the source's
 * config and never changes. An id that names no configured cluster is refused by the parser when
 * clusters are configured, and recorded only (the embedded store) when none are. In cluster mode
 * (storage.url) a project on no configured cluster is set up on the default metrics cluster.
 */
export async function createProject(deps: Ports, auth: UserAuth, input: ProjectInput): Promise<Source> {
  assertProjectsEnabled(deps);
  const organizationId = requireOrganization(auth);
  const cluster = input.projectClusterId;
  const onCluster = cluster !== null && deps.config.clusters.some((c) => c.id === cluster);
  const source: Source = {
    ...newSource(deps, organizationId, {
      type: 'project',
      displayName: input.name,
      driver: null,
      config: onCluster ? { cluster_id: cluster } : {},
      setupStatus: null,
      settings: input.settings,
    }),
    expireAfter: input.expireAfter,
    retention: input.retention,
    projectClusterId: input.projectClusterId,
  };
  // on a configured cluster, or in cluster mode (storage.url) on the default one
  if (deps.metrics.cluster(source) !== null) await deps.metrics.setup(source);
  await deps.sources.insert(source);
  return source;
}

/** The fields PUT /bootstrap/projects/:id may change; absent ones keep their value. */
export interface ProjectUpdate {
  name?: string;
  /** only while the project holds no data (they decide which bucket a stored point is in) */
  timeZone?: string;
  beginningOfWeek?: number;
  granularities?: string[];
  defaultTimeframe?: string;
  defaultGranularity?: string;
  expireAfter?: number | null;
  retention?: Record<string, string> | null;
}

/** A project of the token's organization, or 404 (malformed ids and databases included). */
export async function projectInOrganization(deps: Ports, auth: UserAuth, rawId: string): Promise<Source> {
  const id = normalizeId(rawId);
  const source =
    id && auth.organizationId ? await deps.sources.inOrganization(id, auth.organizationId) : undefined;
  if (!source || source.type !== 'project') throw notFound();
  return source;
}

export const ZONE_FIXED = 'cannot be changed once the project holds data';

/** Whether `update` moves the time zone or the start of the week of `project`. */
function movesBucketing(project: Source, update: ProjectUpdate): { zone: boolean; week: boolean } {
  return {
    zone: update.timeZone !== undefined && update.timeZone !== project.timeZone,
    week: update.beginningOfWeek !== undefined && update.beginningOfWeek !== project.beginningOfWeek,
  };
}

/**
 * The time zone and the start of the week decide which bucket every stored point is in, so they
 * change only while the project holds no data (points acknowledged but not yet folded included).
 * True when it checked (the update moves them and the project holds no data), false when the
 * update moves neither.
 */
async function assertBucketingMayChange(
  deps: Ports,
  project: Source,
  update: ProjectUpdate,
): Promise<boolean> {
  const fields: Record<string, string[]> = {};
  const { zone, week } = movesBucketing(project, update);
  if (!zone && !week) return false;
  const cluster = deps.metrics.cluster(project);
  await deps.metrics.flush();
  if (!(cluster ? await cluster.holdsData() : await deps.sources.holdsData(project.id))) return true;
  if (zone) fields.time_zone = [ZONE_FIXED];
  if (week) fields.beginning_of_week = [ZONE_FIXED];
  throw invalid(fields);
}

function appliedProjectUpdate(project: Source, update: ProjectUpdate): Source {
  return {
    ...project,
    displayName: update.name ?? project.displayName,
    timeZone: update.timeZone ?? project.timeZone,
    beginningOfWeek: update.beginningOfWeek ?? project.beginningOfWeek,
    granularities: update.granularities ?? project.granularities,
    defaultTimeframe: update.defaultTimeframe ?? project.defaultTimeframe,
    defaultGranularity: update.defaultGranularity ?? project.defaultGranularity,
    expireAfter: update.expireAfter === undefined ? project.expireAfter : update.expireAfter,
    retention: update.retention === undefined ? (project.retention ?? null) : update.retention,
  };
}

/**
 * A project's settings edit. `parse` makes the update of a body against a project as stored (its
 * granularity list and retention decide what the body may say; a 422 names the fields). It runs
 * on the project the caller read, then again inside the repository's atomic unit on the project
 * as read there, and the update is applied over that one: an edit made meanwhile keeps its fields.
 * The no-data check of a zone or week-start change needs the metric store, so it runs before the
 * unit; when the project read in the unit makes the update move them although the one checked did
 * not (another edit changed them meanwhile), nothing is written and the edit runs again from the
 * project read there. That pass checks (the update moves them from that project), so it writes or
 * answers the 422.
 */
export async function updateProject(
  deps: Ports,
  project: Source,
  parse: (current: Source) => ProjectUpdate,
): Promise<Source> {
  let read = project;
  for (;;) {
    const checked = await assertBucketingMayChange(deps, read, parse(read));
    const edit = await deps.sources.updateSettings(project.id, (current) => {
      const update = parse(current);
      const { zone, week } = movesBucketing(current, update);
      if (!checked && (zone || week)) return null;
      return appliedProjectUpdate(current, update);
    });
    if (!edit) throw notFound(); // removed since it was read
    if (edit.written) return edit.written;
    read = edit.read;
  }
}

/** The fields PATCH /bootstrap/databases/:id may change (the store's own layout stays as it is). */
export interface DatabaseUpdate {
  name?: string;
  defaultTimeframe?: string;
  defaultGranularity?: string;
}

/** A database source of the token's organization, or 404 (projects included). */
export async function databaseInOrganization(deps: Ports, auth: UserAuth, rawId: string): Promise<Source> {
  const id = normalizeId(rawId);
  const source =
    id && auth.organizationId ? await deps.sources.inOrganization(id, auth.organizationId) : undefined;
  if (!source || source.type !== 'database') throw notFound();
  return source;
}

/**
 * A database source's settings edit: `parse` (the body against a source as stored, 422s) runs
 * inside the repository's atomic unit on the source as read there, and the update is applied over
 * that one (an edit made meanwhile keeps its fields).
 */
export async function updateDatabase(
  deps: Ports,
  database: Source,
  parse: (current: Source) => DatabaseUpdate,
): Promise<Source> {
  const edit = await deps.sources.updateSettings(database.id, (current) => {
    const update = parse(current);
    return {
      ...current,
      displayName: update.name ?? current.displayName,
      defaultTimeframe: update.defaultTimeframe ?? current.defaultTimeframe,
      defaultGranularity: update.defaultGranularity ?? current.defaultGranularity,
    };
  });
  if (!edit?.written) throw notFound(); // removed since it was read
  return edit.written;
}

/** Any source of the token's organization, or 404. */
export async function sourceInOrganization(deps: Ports, auth: UserAuth, rawId: string): Promise<Source> {
  const id = normalizeId(rawId);
  const source =
    id && auth.organizationId ? await deps.sources.inOrganization(id, auth.organizationId) : undefined;
  if (!source) throw notFound();
  return source;
}

export interface SourceDependents {
  dashboards: Array<{ id: string; name: string }>;
  tokens: number;
  transponders: number;
  /** metric keys stored by the service (projects, embedded or on a metrics cluster; 0 for databases, whose store is theirs) */
  keys: number;
  /** monitors on the source: kept, and failed from then on (docs/alerts.md, "source deleted") */
  monitors: number;
}

export async function sourceDependents(deps: Ports, source: Source): Promise<SourceDependents> {
  if (source.type === 'project') await deps.metrics.flush(); // acknowledged points count as stored
  const cluster = deps.metrics.cluster(source);
  const found = await deps.sources.dependents(source.id);
  // a project on a metrics cluster keeps its keys there, not in the embedded store
  return cluster ? { ...found, keys: await cluster.keyCount() } : found;
}

/**
 * Removes a source with everything on it: its source tokens (refused from the next request on),
 * its dashboards with their share links, its transponders, and for a project every stored bucket
 * (deleted in short transactions by the retention sweeper's connection; on a metrics cluster its
 * schema is dropped first, so an unreachable cluster answers 503 and removes nothing). A database
 * source's own store is never touched.
 */
export async function removeSource(
  deps: Ports & { removeStoredData: (sourceId: string) => Promise<number> },
  source: Source,
): Promise<SourceDependents> {
  const gone = await sourceDependents(deps, source);
  const cluster = deps.metrics.cluster(source);
  if (cluster) {
    await cluster.drop();
    await deps.sources.remove(source.id);
    return gone;
  }
  await deps.sources.remove(source.id);
  if (source.type === 'project') await deps.removeStoredData(source.id);
  else await deps.metrics.release(source.id);
  return gone;
}

export interface SourceList {
  projects: Source[];
  databases: Source[];
}

/** The organization's sources; projects only while the deployment has them enabled. */
export async function listSources(deps: Ports, auth: UserAuth): Promise<SourceList> {
  const org = auth.organizationId;
  if (org === null) return { projects: [], databases: [] };
  return {
    projects: deps.config.features.projectsEnabled
      ? await deps.sources.listByOrganization(org, 'project')
      : [],
    databases: await deps.sources.listByOrganization(org, 'database'),
  };
}
