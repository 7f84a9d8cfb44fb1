// Where a sqlite database source may live (SPEC section 8): inside its organization's own folder
// of sources.sqlite_root (`<root>/<organization id>/`), reached without '..' or a symlink that leads
// out, never the service's own database, never the upload staging folder, never a name ending in
// -wal, -shm or -journal (SQLite's companions of another file), never a file with a second hard
// link. Checked on create and again on setup, since the filesystem can change between; the store
// checks the file again at every open (drivers/sqlite-file.ts).
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { fail, ok, type Parsed } from './source-settings';

export const UPLOADS_DIR = '.uploads';
export const SQLITE_EXTENSIONS: readonly string[] = ['.sqlite', '.sqlite3', '.db'];
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const MAX_PATH_CHARS = 1024;
const OUTSIDE = "must resolve inside the organization's folder of the SQLite root (sources.sqlite_root)";
const COMPANION = /-(wal|shm|journal)$/i;

export interface SqliteRoots {
  /** sources.sqlite_root */
  root: string;
  /** the organization's folder inside the root, where its paths start and must stay (else the root) */
  folder?: string;
  /** the service's own database file */
  serviceDb: string;
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/**
 * The real path `candidate` would have: the realpath of its deepest existing ancestor plus the
 * missing rest. null when an existing entry on the way cannot be resolved (a dangling symlink, which
 * opening the file would follow anywhere).
 */
function realPathOf(candidate: string): string | null {
  let existing = candidate;
  const rest: string[] = [];
  for (;;) {
    let exists = true;
    try {
      lstatSync(existing);
    } catch {
      exists = false;
    }
    if (exists) {
      try {
        return path.join(realpathSync(existing), ...rest);
      } catch {
        return null;
      }
    }
    const parent = path.dirname(existing);
    if (parent === existing) return null;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
}

function isServiceDatabase(real: string, serviceDb: string): boolean {
  const db = realPathOf(serviceDb) ?? serviceDb;
  return [db, `${db}-wal`, `${db}-shm`, `${db}-journal`].includes(real);
}

/** Resolves a client's file_path (relative paths are taken from the folder) to an absolute real path. */
export function resolveSqlitePath(input: string, roots: SqliteRoots): Parsed<string> {
  if (input.includes('\0') || input.length > MAX_PATH_CHARS) return fail('is not a valid path');
  if (input.split(/[\\/]+/).includes('..')) return fail("must not contain '..'");
  if (COMPANION.test(input.replace(/[\\/]+$/, ''))) return fail('must not end in -wal, -shm or -journal');
  const base = roots.folder ?? roots.root;
  const root = realPathOf(roots.root);
  const folder = realPathOf(base);
  const real = realPathOf(path.resolve(base, input));
  if (root === null || folder === null || real === null || !isInside(folder, real)) return fail(OUTSIDE);
  if (COMPANION.test(real)) return fail('must not end in -wal, -shm or -journal');
  const uploads = path.join(root, UPLOADS_DIR);
  if (real === uploads || isInside(uploads, real)) return fail(OUTSIDE);
  if (isServiceDatabase(real, roots.serviceDb)) return fail("must not be the service's own database");
  try {
    const stat = statSync(real);
    if (!stat.isFile()) return fail('is not a regular file');
    if (stat.nlink > 1) return fail('must not have more than one hard link');
  } catch {
    // Not there yet: setup creates it.
  }
  return ok(real);
}

export interface UploadedFile {
  filepath: string;
  originalFilename: string | null;
  size: number;
}

/** The upload's extension (lower-case) when it is named and shaped like a SQLite database. */
export async function checkSqliteUpload(file: UploadedFile): Promise<Parsed<string>> {
  const ext = path.extname(file.originalFilename ?? '').toLowerCase();
  if (!SQLITE_EXTENSIONS.includes(ext))
    return fail(`must be a file ending in ${SQLITE_EXTENSIONS.join(', ')}`);
  if (file.size === 0) return fail('is empty');
  const header = Buffer.alloc(SQLITE_MAGIC.length);
  const handle = await open(file.filepath, 'r');
  try {
    const { bytesRead } = await handle.read(header, 0, header.length, 0);
    if (bytesRead < header.length || !header.equals(SQLITE_MAGIC))
      return fail('is not a SQLite database file');
  } finally {
    await handle.close();
  }
  return ok(ext);
}
