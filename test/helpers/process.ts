// The service as a child process (`node --import tsx src/main.ts`, what `npm start` runs), for the
// tests of the command line, start-up failures and signals.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.join(import.meta.dirname, '..', '..');
// tsx by its resolved URL, so that the CLI also runs from other working directories.
export const MAIN = ['--import', import.meta.resolve('tsx'), path.join(ROOT, 'src', 'main.ts')];

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** resolves with the exit code (or signal name) and the time of the exit */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

/** Starts `command args` and waits for its `listening on` line. */
export async function startProcess(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then(({ code }) => reject(new Error(`exited early (${code}): ${out}${err}`)));
  });
  return { child, url, stderr: () => err, exited };
}

export const startService = (args: string[], env: Record<string, string> = {}) =>
  startProcess(process.execPath, [...MAIN, ...args], env);

/** Runs the CLI to completion. */
export function runCli(args: string[], env: Record<string, string> = {}, cwd = ROOT) {
  return spawnSync(process.execPath, [...MAIN, ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}
