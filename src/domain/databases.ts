// Database sources (SPEC section 8): an external Trifle::Stats store the service reads and writes.
// sqlite is a file under sources.sqlite_root, given by path or uploaded; postgres, mysql, redis and
// mongo are servers named by their fields or a URL, whose secrets are stored encrypted.
//
// Network sources are bounded per organization (network.max_database_sources), their setups are
// rate limited per organization (network.setups_per_minute) and a failed setup answers no sooner
// than network.timeout_ms, so answers do not tell a closed port from a filtered one. Two
// organizations never share a store by accident: a redis source gets a prefix of its own unless
// one is named, and a server location (host:port and database, or redis db and prefix) another
// organization's source uses is refused.
import { mkdir, realpath, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Ports } from './ports';
import { invalid, invalidField, notFound, rateLimited } from '../errors';
import { connectionTarget } from '../drivers/network/store';
import { SQLITE_IN_CLUSTER_MODE } from '../drivers';
import { isInternalAddress } from '../lib/outbound';
import { newId, normalizeId } from '../lib/ids';
import { encryptSecrets } from '../lib/secrets';
import type { Driver, Source, UserAuth } from './types';
import type { SourceSettings } from './source-settings';
import { newSource, requireOrganization } from './sources';
import { checkSqliteUpload, resolveSqlitePath, type SqliteRoots, type UploadedFile } from './sqlite-paths';
import type { IdentifierMode } from '../drivers/sqlite/setup';

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
export function sqliteRoots(deps: Pick<Ports, 'config'>, organizationId: string | null): SqliteRoots {
  const root = deps.config.sources.sqliteRoot;
  return {
    root,
    folder: organizationId === null ? undefined : path.join(root, organizationId),
    serviceDb: path.join(deps.config.storage.dataDir, 'service.db'),
  };
}

/** A file_path inside the organization's folder that no other organization's source uses. */
async function sqliteFileFromPath(deps: Ports, organizationId: string, filePath: string): Promise<string> {
  const resolved = resolveSqlitePath(filePath, sqliteRoots(deps, organizationId));
  if (!resolved.ok) throw invalidField('file_path', resolved.message);
  const owners = await deps.sources.sqliteFileOrganizations(resolved.value);
  if (owners.some((org) => org !== organizationId)) throw fileTaken();
  return resolved.value;
}

/** Moves a checked upload from the staging folder to <root>/<organization id>/<source id>.<ext>. */
async function sqliteFileFromUpload(
  deps: Ports,
  organizationId: string,
  sourceId: string,
  upload: UploadedFile,
): Promise<string> {
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
  deps: Ports,
  auth: UserAuth,
  input: DatabaseInput,
  upload: UploadedFile | null,
): Promise<Source> {
  const organizationId = requireOrganization(auth);
  if (input.driver === 'sqlite' && deps.config.storage.url !== null)
    throw invalidField('driver', SQLITE_IN_CLUSTER_MODE);
  const id = newId();
  const max = deps.config.network?.maxDatabaseSources ?? DEFAULT_MAX_SOURCES;
  if (
    input.driver !== 'sqlite' &&
    (await deps.sources.listByOrganization(organizationId, 'database')).filter((s) => s.driver !== 'sqlite')
      .length >= max
  ) {
    throw tooMany(max);
  }
  const plain = { ...input.config };
  if (input.driver === 'redis' && typeof plain.prefix !== 'string') plain.prefix = `trfl_${id}`;
  if (input.driver !== 'sqlite') await refuseSharedLocation(deps, organizationId, input.driver, plain);
  const config: Record<string, unknown> = encryptSecrets(deps.secrets, plain);
  let moved: string | null = null;
  if (input.driver === 'sqlite') {
    if (upload && input.filePath !== null)
      throw invalid({ sqlite_file: ['cannot be combined with file_path'] });
    if (!upload && input.filePath === null)
      throw invalid({ file_path: ['is required (or upload sqlite_file)'] });
    if (upload) moved = await sqliteFileFromUpload(deps, organizationId, id, upload);
    config.file_path = moved ?? (await sqliteFileFromPath(deps, organizationId, input.filePath!));
  }
  const source = newSource(
    deps,
    organizationId,
    {
      type: 'database',
      displayName: input.displayName,
      driver: input.driver,
      config,
      setupStatus: 'pending',
      settings: input.settings,
    },
    id,
  );
  // The checks above run again in the insert's own transaction (another request may have come in).
  let refused: Awaited<ReturnType<Ports['sources']['insertDatabase']>>;
  try {
    refused = await deps.sources.insertDatabase(source, max, (other) =>
      clashes(deps, input.driver, plain, other),
    );
  } catch (err) {
    if (moved) await rm(moved, { force: true });
    throw err;
  }
  if (refused !== null && moved) await rm(moved, { force: true });
  if (refused === 'too_many') throw tooMany(max);
  if (refused === 'file_taken') throw fileTaken();
  if (refused === 'location_taken') throw locationTaken(input.driver, plain);
  return source;
}

const DEFAULT_MAX_SOURCES = 50;

/**
 * Where a network source keeps its data, as a comparable text: `host:port/database` (postgres,
 * mysql, mongo) or `host:port/db#prefix` (redis); loopback addresses and `localhost` count as one
 * host. null when the settings name no valid host (setup refuses those).
 */
function storeLocation(
  driver: string,
  config: Record<string, unknown>,
  decrypt: (s: string) => string,
): string | null {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  try {
    const url = text(config.url);
    const target = connectionTarget(driver, {
      url: url === undefined ? undefined : decrypt(url),
      host: text(config.host),
      port: typeof config.port === 'number' ? config.port : undefined,
      database: text(config.database_name),
      db: typeof config.database === 'number' ? config.database : undefined,
    });
    let host = target.host.toLowerCase().replace(/\.$/, '');
    if (host === 'localhost' || isInternalLoopback(host)) host = 'loopback';
    const place =
      driver === 'redis' ? `${target.db ?? 0}#${text(config.prefix) ?? 'trfl'}` : (target.database ?? '');
    return `${driver}:${host}:${target.port}/${place}`;
  } catch {
    return null;
  }
}

function isInternalLoopback(host: string): boolean {
  return isInternalAddress(host) && (/^127\./.test(host) || host === '::1' || /^::ffff:127\./i.test(host));
}

/** Whether another organization's stored config (`other`) names the server location of `config`. */
function clashes(
  deps: Pick<Ports, 'secrets'>,
  driver: string,
  config: Record<string, unknown>,
  other: Record<string, unknown>,
): boolean {
  const mine = storeLocation(driver, config, (s) => s);
  return mine !== null && storeLocation(driver, other, (stored) => deps.secrets.decrypt(stored)) === mine;
}

/** 422 when another organization's source of the driver uses the same server location. */
async function refuseSharedLocation(
  deps: Ports,
  organizationId: string,
  driver: string,
  config: Record<string, unknown>,
): Promise<void> {
  if (storeLocation(driver, config, (s) => s) === null) return;
  const others = await deps.sources.otherDatabaseConfigs(driver, organizationId);
  if (others.some((other) => clashes(deps, driver, config, other))) throw locationTaken(driver, config);
}

function locationTaken(driver: string, config: Record<string, unknown>) {
  const field = driver === 'redis' ? 'prefix' : config.url !== undefined ? 'url' : 'database_name';
  return invalidField(
    field,
    driver === 'redis'
      ? 'is already used on this server by a source of another organization: choose another prefix'
      : 'is already used on this server by a source of another organization: choose another database',
  );
}

const tooMany = (max: number) =>
  invalidField(
    'driver',
    `the organization already has ${max} network database sources, the most allowed (network.max_database_sources)`,
  );

const fileTaken = () => invalidField('file_path', 'is already used by a source of another organization');

/** Recent setups of network sources per organization (the rate limit's window). */
const recentSetups = new Map<string, number[]>();
const SETUP_WINDOW_MS = 60_000;

function takeSetupTurn(deps: Ports, organizationId: string): void {
  const limit = deps.config.network?.setupsPerMinute ?? 10;
  const now = Date.now();
  const times = (recentSetups.get(organizationId) ?? []).filter((t) => now - t < SETUP_WINDOW_MS);
  if (times.length >= limit) {
    recentSetups.set(organizationId, times);
    const retryAfter = Math.max(1, Math.ceil((times[0]! + SETUP_WINDOW_MS - now) / 1000));
    throw rateLimited(
      `at most ${limit} database setups a minute per organization (network.setups_per_minute)`,
      retryAfter,
    );
  }
  times.push(now);
  recentSetups.set(organizationId, times);
  if (recentSetups.size > 10_000) recentSetups.delete(recentSetups.keys().next().value!);
}

/** A database source of the organization, or 404 (malformed ids and projects included). */
async function databaseInOrganization(deps: Ports, auth: UserAuth, rawId: string): Promise<Source> {
  const id = normalizeId(rawId);
  const source =
    id && auth.organizationId ? await deps.sources.inOrganization(id, auth.organizationId) : undefined;
  if (!source || source.type !== 'database') throw notFound();
  return source;
}

/**
 * POST /bootstrap/databases/:id/setup: creates the store's layout through the source's store
 * (the driver registry picks it); any failure is 422 with the driver's message.
 */
export async function setupDatabase(deps: Ports, auth: UserAuth, rawId: string): Promise<SetupResult> {
  const source = await databaseInOrganization(deps, auth, rawId);
  const network = source.driver !== 'sqlite';
  if (network) takeSetupTurn(deps, source.organizationId);
  const started = Date.now();
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
    await deps.sources.setSetupStatus(source.id, 'failed');
    if (network) {
      // Every failure takes the connect time limit: a refused port answers as late as a filtered one.
      const rest = started + (deps.config.network?.timeoutMs ?? 5_000) - Date.now();
      if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    }
    throw invalidField('setup', err instanceof Error ? err.message : String(err));
  }
  await deps.sources.setSetupStatus(source.id, 'ready');
  return { source: { ...source, setupStatus: 'ready' }, setup: { status: 'ready', message } };
}
