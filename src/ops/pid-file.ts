// `<data_dir>/service.pid`: written by a serving process, removed when it stops. `service restore`
// reads it to refuse replacing the database under a running service. A file left by a crash names
// a process that is gone (or, rarely, a reused pid: the message says how to remove the file).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PID_FILE = 'service.pid';

export interface PidInfo {
  pid: number;
  url: string;
}

export const pidFilePath = (dataDir: string) => path.join(dataDir, PID_FILE);

export function writePidFile(dataDir: string, info: PidInfo): void {
  writeFileSync(pidFilePath(dataDir), `${JSON.stringify(info)}\n`, { mode: 0o600 });
}

/** Removes the file if it is still this process's (another server may have taken the directory). */
export function removePidFile(dataDir: string, pid: number): void {
  if (readPidFile(dataDir)?.pid === pid) rmSync(pidFilePath(dataDir), { force: true });
}

export function readPidFile(dataDir: string): PidInfo | null {
  try {
    const info = JSON.parse(readFileSync(pidFilePath(dataDir), 'utf8')) as PidInfo;
    return Number.isSafeInteger(info.pid) ? info : null;
  } catch {
    return null;
  }
}

/** The running service on this data directory, if any (a process with the recorded pid exists). */
export function runningService(dataDir: string): PidInfo | null {
  const info = readPidFile(dataDir);
  if (!info) return null;
  try {
    process.kill(info.pid, 0);
    return info;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? info : null;
  }
}
