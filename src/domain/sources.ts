// Project sources and the organization's source list (SPEC sections 4 and 7).
import type { Deps } from '../deps';
import { conflict, forbidden } from '../errors';
import { newId } from '../lib/ids';
import type { Source, UserAuth } from './types';
import type { SourceSettings } from './source-settings';

export const PROJECTS_DISABLED = 'Projects are disabled for this deployment';

export interface ProjectInput {
  name: string;
  settings: SourceSettings;
  expireAfter: number | null;
  projectClusterId: string | null;
}

/** 403 when the deployment runs without projects. */
export function assertProjectsEnabled(deps: Pick<Deps, 'config'>): void {
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
  deps: Pick<Deps, 'now'>,
  organizationId: string,
  fields: Pick<Source, 'type' | 'displayName' | 'driver' | 'config' | 'setupStatus'> & { settings: SourceSettings },
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
    projectClusterId: null,
    config: fields.config,
    setupStatus: fields.setupStatus,
    createdAt: deps.now(),
  };
}

export function createProject(deps: Deps, auth: UserAuth, input: ProjectInput): Source {
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
    projectClusterId: input.projectClusterId,
  };
  deps.sources.insert(source);
  return source;
}

export interface SourceList {
  projects: Source[];
  databases: Source[];
}

/** The organization's sources; projects only while the deployment has them enabled. */
export function listSources(deps: Deps, auth: UserAuth): SourceList {
  const org = auth.organizationId;
  if (org === null) return { projects: [], databases: [] };
  return {
    projects: deps.config.features.projectsEnabled ? deps.sources.listByOrganization(org, 'project') : [],
    databases: deps.sources.listByOrganization(org, 'database'),
  };
}
