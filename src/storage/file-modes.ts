// The service's files hold password hashes, token hashes and database credentials: the data
// directory is 0700 and the database files 0600 (SPEC 9), whatever the process umask, and files
// left with wider modes by earlier versions are narrowed on start.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

export const DIRECTORY_MODE = 0o700;
export const FILE_MODE = 0o600;

/** Creates the data directory 0700 (or narrows an existing one to it). */
export function securePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIRECTORY_MODE });
  chmodSync(dir, DIRECTORY_MODE); // mkdir's mode is filtered by the umask, and skips existing dirs
}

/**
 * Creates the database file 0600 before SQLite opens it, and narrows it and its -wal/-shm to 0600.
 * SQLite gives the -wal and -shm it creates later the main file's mode.
 */
export function securePrivateDatabase(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', FILE_MODE));
  for (const name of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (existsSync(name)) chmodSync(name, FILE_MODE);
  }
}
