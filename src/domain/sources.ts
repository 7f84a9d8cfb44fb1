// Project sources and the organization's source list (SPEC sections 4 and 7).
import type { Ports } from './ports';
import { conflict, forbidden, notFound } from '../errors';
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

export function createProject(deps: Ports, auth: UserAuth, input: ProjectInput): Source {
  assertProjectsEnabled(deps);
  const organizationId = requireOrganization(auth);
  const source: Source = {
    ...newSource(deps, organizationId, {
      type: 'project',
      displayName: input.name,
      driver: null,
      config: {},
      setupStatus: null,
      settings: input.settings,
    }),
    expireAfter: input.expireAfter,
    retention: input.retention,
    projectClusterId: input.projectClusterId,
  };
  deps.sources.insert(source);
  return source;
}

/** The fields PUT /bootstrap/projects/:id may change; absent ones keep their value. */
export interface ProjectUpdate {
  name?: string;
  defaultTimeframe?: string;
  defaultGranularity?: string;
  expireAfter?: number | null;
  retention?: Record<string, string> | null;
}

/** A project of the token's organization, or 404 (malformed ids and databases included). */
export function projectInOrganization(deps: Ports, auth: UserAuth, rawId: string): Source {
  const id = normalizeId(rawId);
  const source = id && auth.organizationId ? deps.sources.inOrganization(id, auth.organizationId) : undefined;
  if (!source || source.type !== 'project') throw notFound();
  return source;
}

export function updateProject(deps: Ports, project: Source, update: ProjectUpdate): Source {
  const next: Source = {
    ...project,
    displayName: update.name ?? project.displayName,
    defaultTimeframe: update.defaultTimeframe ?? project.defaultTimeframe,
    defaultGranularity: update.defaultGranularity ?? project.defaultGranularity,
    expireAfter: update.expireAfter === undefined ? project.expireAfter : update.expireAfter,
    retention: update.retention === undefined ? (project.retention ?? null) : update.retention,
  };
  deps.sources.updateProject(next);
  return next;
}

export interface SourceList {
  projects: Source[];
  databases: Source[];
}

/** The organization's sources; projects only while the deployment has them enabled. */
export function listSources(deps: Ports, auth: UserAuth): SourceList {
  const org = auth.organizationId;
  if (org === null) return { projects: [], databases: [] };
  return {
    projects: deps.config.features.projectsEnabled ? deps.sources.listByOrganization(org, 'project') : [],
    databases: deps.sources.listByOrganization(org, 'database'),
  };
}
