// Shared by the HTTP benchmarks: the service (or a bare Koa baseline) as a child process, so the
// load generator in this process does not share its event loop.
// BENCH_NODE_ARGS adds node flags to the children, e.g. to profile the service under a benchmark:
//   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=prof' node --import tsx bench/ingest.ts
// BENCH_SERVICE=dist/service runs the single executable (npm run build) instead of `src/main.ts`
// through tsx, which itself takes about 35 MB of memory in the service's process.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken } from '../test/helpers/server';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface ChildServer {
  url: string;
  pid: number;
  dataDir: string;
  /** SIGTERM (graceful: pending writes committed) and wait for the exit */
  stop(): Promise<void>;
  /** deletes the data directory (after stop) */
  remove(): void;
}

/** How spawnServer runs its script. */
export interface SpawnOptions {
  /** added to this process's environment */
  env?: Record<string, string>;
  /** a program to run instead of the script through tsx (the single executable) */
  executable?: string;
  /** node flags before the script (not for an executable) */
  flags?: string[];
  /** the Node that runs the script (default: this one) */
  node?: string;
  /** the checkout whose script runs (default: this one), e.g. a worktree of an earlier commit */
  root?: string;
}

/** A TypeScript server script (through tsx) or, with `executable`, that program, on a fresh data dir. */
export async function spawnServer(
  script: string,
  args: string[] = [],
  options: SpawnOptions = {},
): Promise<ChildServer> {
  const { env = {}, executable, flags = [], node = process.execPath, root = ROOT } = options;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-'));
  const nodeArgs = [...flags, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')];
  const scriptArgs = args.map((a) => a.replace('$DATA', dataDir));
  const [command, commandArgs] = executable
    ? [path.resolve(root, executable), scriptArgs]
    : [node, [...nodeArgs, '--import', 'tsx', script, ...scriptArgs]];
  const child: ChildProcess = spawn(command, commandArgs, {
    cwd: root,
    env: { ...process.env, SERVICE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited early (${code}): ${out}`)));
  });
  child.removeAllListeners('exit');
  return {
    url,
    pid: child.pid!,
    dataDir,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
    remove: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/**
 * `service serve` on a fresh data dir, port 0 (the executable named by BENCH_SERVICE, if set),
 * with the young generation npm start and the executable give the event loop.
 */
export function spawnService(env: Record<string, string> = {}, root?: string): Promise<ChildServer> {
  const executable = process.env.BENCH_SERVICE || undefined;
  const flags = executable ? [] : ['--max-semi-space-size=8'];
  return spawnServer('src/main.ts', ['serve', '--port', '0', '--data', '$DATA'], {
    env,
    executable,
    flags,
    root,
  });
}

/**
 * The Node that runs the bare Koa baseline: the service's own runtime, so that the comparison is of
 * the code and not of two Node versions. Against the executable that is the Node it embeds, which
 * the build keeps in .build/node-runtime/ (else this Node, and the label says so).
 */
function bareKoaRuntime(): { node: string; label: string } {
  if (!process.env.BENCH_SERVICE)
    return { node: process.execPath, label: `Node ${process.version}, as the service` };
  const runtimes = path.join(ROOT, '.build', 'node-runtime');
  for (const version of existsSync(runtimes) ? readdirSync(runtimes).sort().reverse() : []) {
    const node = path.join(runtimes, version, 'package', 'bin', 'node');
    if (existsSync(node)) return { node, label: `Node v${version}, the executable's` };
  }
  return {
    node: process.execPath,
    label: `Node ${process.version}: not the executable's, which is not in .build/`,
  };
}

/** The bare Koa baseline (bench/bare-koa.ts) on the service's runtime. */
export function spawnBareKoa(): Promise<ChildServer> {
  return spawnServer('bench/bare-koa.ts', [], { node: bareKoaRuntime().node });
}

/** What spawnService runs, for the benchmarks' first line. */
export function serviceLabel(): string {
  return process.env.BENCH_SERVICE
    ? `service: ${process.env.BENCH_SERVICE} (single executable)`
    : 'service: src/main.ts through tsx (npm start)';
}

/** What spawnBareKoa runs on. */
export const bareKoaLabel = () => `bare Koa baseline: ${bareKoaRuntime().label}`;

/** A project with the given settings and a source token: the headers for the metrics endpoints. */
export async function projectHeaders(
  server: { url: string },
  project: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const agent = await createProjectWithToken(server, project);
  return {
    authorization: `Bearer ${agent.sourceToken}`,
    'x-service-source-id': agent.sourceId,
    'content-type': 'application/json',
  };
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** CPU seconds (user + system, all threads) a process has used so far (Linux /proc). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** CPU seconds of a process so far split by kind and by thread (Linux /proc). */
export interface CpuSplit {
  user: number;
  system: number;
  /**
   * per thread name, digits at the end dropped (`V8Worker`, `libuv-worker`): the event loop is
   * `MainThread`, the worker threads carry their names (`metric-writer`, `db-checkpointer`,
   * `batch-parser`). Node 24 (the executable) names its threads; Node 20 calls every one `node`.
   */
  threads: Map<string, number>;
}

export function cpuSplit(pid: number): CpuSplit {
  const split: CpuSplit = { user: 0, system: 0, threads: new Map() };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[-_:]?\d+$/, '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]) / 100;
    const system = Number(fields[12]) / 100;
    split.user += user;
    split.system += system;
    split.threads.set(name, (split.threads.get(name) ?? 0) + user + system);
  }
  return split;
}

/**
 * What a process spent between two splits, per unit of work (e.g. per batch) in ms: user and
 * system time, and per thread name when the runtime names its threads. Threads that ended in
 * between are not counted (the service's threads live as long as it does).
 */
export function cpuSplitLine(before: CpuSplit, after: CpuSplit, units: number): string {
  const ms = (seconds: number) => fmt((seconds / units) * 1e3, 3);
  const threads = [...after.threads]
    .map(([name, seconds]) => [name, seconds - (before.threads.get(name) ?? 0)] as const)
    .filter(([, seconds]) => seconds > 0)
    .sort((a, b) => b[1] - a[1]);
  const named = threads.length > 1 ? `; ${threads.map(([name, s]) => `${name} ${ms(s)}`).join(', ')}` : '';
  return `user ${ms(after.user - before.user)}, system ${ms(after.system - before.system)}${named}`;
}

/**
 * Waits until a process is idle (under a tenth of a core over a quarter second, twice in a row): the
 * service has folded what it acknowledged. Returns the seconds waited, not counting the idle quarters.
 */
export async function waitIdle(pid: number, timeoutSeconds = 300): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  let last = cpuSeconds(pid);
  while (quiet < 2) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = cpuSeconds(pid);
    quiet = now - last < 0.025 ? quiet + 1 : 0;
    last = now;
    if (performance.now() - started > timeoutSeconds * 1000)
      throw new Error(`process ${pid} still busy after ${timeoutSeconds} s`);
  }
  return Math.max(0, (performance.now() - started) / 1000 - 0.5);
}

/** Deterministic pseudo-random numbers in [0, 1). */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4_294_967_296;
  };
}

/** A batch body: 1,000 points x 3 leaves spread over the hour starting at `hourMs`. */
export function batchBody(hourMs: number, random: () => number, key = 'bench.orders'): string {
  return pointsBody(
    Array.from({ length: 1000 }, () => key),
    hourMs,
    3_600_000,
    random,
  );
}

/** `count` distinct keys out of `pool` (named bench.key.<n>), in random order. */
export function sampleKeys(pool: number, count: number, random: () => number): string[] {
  const ids = Array.from({ length: pool }, (_, i) => i);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(random() * (pool - i));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  return ids.slice(0, count).map((n) => `bench.key.${n}`);
}

/** One point of 3 leaves per key, timestamps spread over [startMs, startMs + spanMs). */
export function pointsBody(
  keys: readonly string[],
  startMs: number,
  spanMs: number,
  random: () => number,
): string {
  const points = keys.map((key, i) => ({
    key,
    at: new Date(startMs + Math.floor(random() * spanMs)).toISOString(),
    values: { count: 1, amount: { net: (i % 50) + 0.5, tax: i % 7 } },
  }));
  return JSON.stringify({ points });
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
