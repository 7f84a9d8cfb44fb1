// The other servers of the intake benchmarks, from Debian's packages extracted (never installed as
// services) into .cache/: VictoriaMetrics (`victoria-metrics`, single-node: line protocol on
// /write, remote write on /api/v1/write) and InfluxDB 1.x (`influxdb`: /write?db=). Each runs as a
// child process on a fresh data directory and a free port, like spawnService.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ChildServer } from './helpers';

const ROOT = path.resolve(import.meta.dirname, '..');
const CACHE = path.join(ROOT, '.cache');

/** The package's files under .cache/<package>/, downloaded and extracted with apt-get and dpkg -x if missing. */
export function extracted(pkg: string, binary: string): string {
  const file = path.join(CACHE, pkg, binary);
  if (existsSync(file)) return file;
  console.log(`${file} is missing: extracting Debian's ${pkg} package into .cache/`);
  mkdirSync(CACHE, { recursive: true });
  execFileSync('apt-get', ['download', pkg], { cwd: CACHE, stdio: 'inherit' });
  const deb = readdirSync(CACHE).find((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'));
  if (!deb) throw new Error(`apt-get download ${pkg} left no .deb in .cache/`);
  execFileSync('dpkg', ['-x', deb, pkg], { cwd: CACHE, stdio: 'inherit' });
  rmSync(path.join(CACHE, deb));
  return file;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function startChild(
  command: string,
  args: string[],
  env: Record<string, string>,
  url: string,
  ready: string,
  dataDir: string,
): Promise<ChildServer> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} exited early: ${log}`);
    try {
      const res = await fetch(`${url}${ready}`);
      await res.arrayBuffer();
      if (res.status < 300) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${command} did not start in 30 s: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    dataDir,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
    remove: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** VictoriaMetrics single-node; retention long enough for the workloads' 2026 timestamps. */
export async function spawnVictoriaMetrics(): Promise<ChildServer> {
  const binary = extracted('victoria-metrics', 'usr/bin/victoria-metrics');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-vm-'));
  const port = await freePort();
  return startChild(
    binary,
    [
      `-storageDataPath=${dataDir}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      '-retentionPeriod=100y',
      '-loggerLevel=ERROR',
    ],
    {},
    `http://127.0.0.1:${port}`,
    '/health',
    dataDir,
  );
}

/** Samples VictoriaMetrics ignored (too old, too new): a run that drops samples would flatter it. */
export async function victoriaIgnored(server: ChildServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let ignored = 0;
  for (const m of text.matchAll(/^vm_rows_ignored_total\{[^}]*\} (\d+)/gm)) ignored += Number(m[1]);
  return ignored;
}

/** InfluxDB 1.x with a `bench` database, settings through its INFLUXDB_* environment. */
export async function spawnInfluxdb(): Promise<ChildServer> {
  const binary = extracted('influxdb', 'usr/bin/influxd');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-influxdb-'));
  const [port, rpc] = [await freePort(), await freePort()];
  const server = await startChild(
    binary,
    ['run'],
    {
      INFLUXDB_META_DIR: path.join(dataDir, 'meta'),
      INFLUXDB_DATA_DIR: path.join(dataDir, 'data'),
      INFLUXDB_DATA_WAL_DIR: path.join(dataDir, 'wal'),
      INFLUXDB_HTTP_BIND_ADDRESS: `127.0.0.1:${port}`,
      INFLUXDB_BIND_ADDRESS: `127.0.0.1:${rpc}`,
      INFLUXDB_REPORTING_DISABLED: 'true',
      INFLUXDB_HTTP_LOG_ENABLED: 'false',
      INFLUXDB_LOGGING_LEVEL: 'error',
    },
    `http://127.0.0.1:${port}`,
    '/ping',
    dataDir,
  );
  const res = await fetch(`${server.url}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'q=CREATE DATABASE bench',
  });
  if (res.status !== 200) throw new Error(`influxdb CREATE DATABASE: ${res.status} ${await res.text()}`);
  return server;
}

/** The Debian version of an extracted package (its changelog's first line), for the benchmark's header. */
export function packageVersion(pkg: string): string {
  const changelog = path.join(CACHE, pkg, 'usr/share/doc', pkg, 'changelog.Debian.gz');
  if (!existsSync(changelog)) return 'unknown';
  const first = gunzipSync(readFileSync(changelog)).toString('utf8').split('\n')[0]!;
  return /\(([^)]+)\)/.exec(first)?.[1] ?? first;
}
