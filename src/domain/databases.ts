// Database sources (SPEC section 8): an external Trifle::Stats store the service reads and writes.
// sqlite is a file under sources.sqlite_root, given by path or uploaded; postgres, mysql, redis and
// mongo are servers named by their fields or a URL, whose secrets are stored encrypted.
import { mkdir, realpath, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../deps';
import { invalid, invalidField, notFound } from '../errors';
import { newId, normalizeId } from '../lib/ids';
import { encryptSecrets } from '../lib/secrets';
import type { Driver, Source, UserAuth } from './types';
import type { SourceSettings } from './source-settings';
import { newSource, requireOrganization } from './sources';
import { checkSqliteUpload, resolveSqlitePath, type SqliteRoots, type UploadedFile } from './sqlite-paths';
import type { IdentifierMode } from '../drivers/sqlite-setup';

export interface DatabaseInput {
  displayName: string;
  driver: Driver;
  settings: SourceSettings;
  /** the driver's validated fields (stored, never presented); identifier_mode included */
  config: Record<string, unknown> & { identifier_mode: IdentifierMode };
  /** sqlite: the file_path field, when given */
  filePath: string | null;
}

export interface SetupResult {
  source: Source;
  setup: { status: 'ready'; message: string };
}

/**
 * The organization's folder rules; `null` for a source grandfathered from before per-organization
 * folders (sqlite-migration.ts), whose path is checked against the whole root as it was then.
 */
export function sqliteRoots(deps: Pick<Deps, 'config'>, organizationId: string | null): SqliteRoots {
  const root = deps.config.sources.sqliteRoot;
  return {
    root,
    folder: organizationId === null ? undefined : path.join(root, organizationId),
    serviceDb: path.join(deps.config.storage.dataDir, 'service.db'),
  };
}

/** A file_path inside the organization's folder that no other organization's source uses. */
function sqliteFileFromPath(deps: Deps, organizationId: string, filePath: string): string {
  const resolved = resolveSqlitePath(filePath, sqliteRoots(deps, organizationId));
  if (!resolved.ok) throw invalidField('file_path', resolved.message);
  const owners = deps.sources.sqliteFileOrganizations(resolved.value);
  if (owners.some((org) => org !== organizationId)) {
    throw invalidField('file_path', 'is already used by a source of another organization');
  }
  return resolved.value;
}

/** Moves a checked upload from the staging folder to <root>/<organization id>/<source id>.<ext>. */
async function sqliteFileFromUpload(deps: Deps, organizationId: string, sourceId: string, upload: UploadedFile): Promise<string> {
  const checked = await checkSqliteUpload(upload);
  if (!checked.ok) throw invalidField('sqlite_file', checked.message);
  const folder = path.join(await realpath(deps.config.sources.sqliteRoot), organizationId);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const target = path.join(folder, `${sourceId}${checked.value}`);
  await rename(upload.filepath, target);
  return target;
}

/**
 * POST /bootstrap/databases. The caller deletes the staged upload afterwards whatever happens; a
 * file moved into the root is removed again when the source cannot be stored.
 */
export async function createDatabase(
  deps: Deps,
  auth: UserAuth,
  input: DatabaseInput,
  upload: UploadedFile | null,
): Promise<Source> {
  const organizationId = requireOrganization(auth);
  const id = newId();
  const config: Record<string, unknown> = encryptSecrets(deps.secrets, input.config);
  let moved: string | null = null;
  if (input.driver === 'sqlite') {
    if (upload && input.filePath !== null) throw invalid({ sqlite_file: ['cannot be combined with file_path'] });
    if (!upload && input.filePath === null) throw invalid({ file_path: ['is required (or upload sqlite_file)'] });
    if (upload) moved = await sqliteFileFromUpload(deps, organizationId, id, upload);
    config.file_path = moved ?? sqliteFileFromPath(deps, organizationId, input.filePath!);
  }
  const source = newSource(
    deps,
    organizationId,
    { type: 'database', displayName: input.displayName, driver: input.driver, config, setupStatus: 'pending', settings: input.settings },
    id,
  );
  try {
    deps.sources.insert(source);
  } catch (err) {
    if (moved) await rm(moved, { force: true });
    throw err;
  }
  return source;
}

/** A database source of the organization, or 404 (malformed ids and projects included). */
function databaseInOrganization(deps: Deps, auth: UserAuth, rawId: string): Source {
  const id = normalizeId(rawId);
  const source = id && auth.organizationId ? deps.sources.inOrganization(id, auth.organizationId) : undefined;
  if (!source || source.type !== 'database') throw notFound();
  return source;
}

/**
 * POST /bootstrap/databases/:id/setup: creates the store's layout through the source's store
 * (the driver registry picks it); any failure is 422 with the driver's message.
 */
export async function setupDatabase(deps: Deps, auth: UserAuth, rawId: string): Promise<SetupResult> {
  const source = databaseInOrganization(deps, auth, rawId);
  let message: string;
  try {
    if (source.driver === 'sqlite') {
      // The filesystem may have changed since the source was created: check the path again.
      const stored = source.config.file_path;
      if (typeof stored !== 'string') throw new Error('the source has no file_path');
      const legacy = source.config.legacy_path === true;
      const file = resolveSqlitePath(stored, sqliteRoots(deps, legacy ? null : source.organizationId));
      if (!file.ok) throw new Error(`file_path ${file.message}`);
    }
    message = (await deps.metrics.setup(source)).message;
  } catch (err) {
    deps.sources.setSetupStatus(source.id, 'failed');
    throw invalidField('setup', err instanceof Error ? err.message : String(err));
  }
  deps.sources.setSetupStatus(source.id, 'ready');
  return { source: { ...source, setupStatus: 'ready' }, setup: { status: 'ready', message } };
}
