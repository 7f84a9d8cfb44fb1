// Start-up migration of sqlite sources created before per-organization folders (SPEC 8: "sources
// created before this rule keep working"). Runs before the server listens, so no source file is open:
// - an upload the service stored as <root>/<source id>.<ext> belongs to the service: it moves, with
//   any -wal/-shm/-journal companion, into <root>/<organization id>/ and the source follows it;
// - a file_path the organization named is grandfathered where it is (an application may be writing
//   it there): marked `legacy_path`, checked against the whole root as before. A legacy name that
//   is a companion of another file (-wal, -shm, -journal) stays refused at every open of the store.
// Also removes what a crash left in the upload staging folder.
import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Ports } from './ports';
import { SQLITE_EXTENSIONS, UPLOADS_DIR } from './sqlite-paths';

const COMPANIONS = ['-wal', '-shm', '-journal'];

function isInsideFolder(folder: string, file: string): boolean {
  return path.dirname(file) === folder || file.startsWith(`${folder}${path.sep}`);
}

export interface SqliteMigrationReport {
  moved: number;
  grandfathered: number;
  stagedRemoved: number;
}

export async function migrateSqliteSources(
  deps: Pick<Ports, 'config' | 'sources' | 'log'>,
): Promise<SqliteMigrationReport> {
  const report: SqliteMigrationReport = { moved: 0, grandfathered: 0, stagedRemoved: 0 };
  const root = realpathSync(deps.config.sources.sqliteRoot);
  for (const source of await deps.sources.sqliteSources()) {
    const file = source.config.file_path;
    if (typeof file !== 'string' || source.config.legacy_path === true) continue;
    const folder = path.join(root, source.organizationId);
    if (isInsideFolder(folder, file)) continue;
    const ext = path.extname(file).toLowerCase();
    const isUpload =
      path.dirname(file) === root &&
      path.basename(file) === `${source.id}${ext}` &&
      SQLITE_EXTENSIONS.includes(ext);
    if (isUpload) {
      const target = path.join(folder, path.basename(file));
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      for (const suffix of COMPANIONS)
        if (existsSync(file + suffix)) renameSync(file + suffix, target + suffix);
      if (existsSync(file)) renameSync(file, target);
      await deps.sources.setConfig(source.id, { ...source.config, file_path: target });
      report.moved++;
    } else {
      await deps.sources.setConfig(source.id, { ...source.config, legacy_path: true });
      report.grandfathered++;
    }
  }
  report.stagedRemoved = clearStaging(path.join(root, UPLOADS_DIR));
  if (report.moved + report.grandfathered + report.stagedRemoved > 0)
    deps.log.info('sqlite sources migrated', { ...report });
  return report;
}

/** Staged uploads left by a crash: nothing refers to them; they only take space. */
function clearStaging(dir: string): number {
  let removed = 0;
  for (const entry of readdirSync(dir)) {
    rmSync(path.join(dir, entry), { recursive: true, force: true });
    removed++;
  }
  return removed;
}
