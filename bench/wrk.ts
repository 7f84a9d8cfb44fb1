// wrk (Debian's package) as the load generator of the HTTP benchmarks, in its own process so that
// it never shares the benchmark's or the service's event loop. Request bodies are written to files
// that a generated Lua script loads once per wrk thread and cycles through. Responses slower than
// wrk's default 2 s time-out would count as errors without a latency: the time-out is 30 s.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const WRK = '/usr/bin/wrk';

/** Installs wrk with apt when it is missing (as root, or through sudo when there is one). */
export function ensureWrk(): string {
  if (existsSync(WRK)) return WRK;
  console.log('wrk is missing: installing it with apt-get');
  const root = process.getuid?.() === 0;
  const run = (args: string[]) =>
    execFileSync(root ? args[0]! : 'sudo', root ? args.slice(1) : args, { stdio: 'inherit' });
  run(['apt-get', 'update']);
  run(['apt-get', 'install', '-y', 'wrk']);
  return WRK;
}

export interface WrkLoad {
  url: string;
  method?: string;
  headers: Record<string, string>;
  /** bodies sent in turn (each wrk thread starts at its own offset) */
  bodies: Array<string | Uint8Array>;
  connections: number;
  threads?: number;
  seconds: number;
  /** pause of each connection before each request (ms), to hold a rate below the maximum */
  delayMs?: number;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  perSecond: number;
  /** latency percentiles in ms */
  p50: number;
  p99: number;
  /** answers other than 2xx/3xx plus socket errors */
  failures: number;
  /** wrk's own words for them, e.g. "non-2xx 3, timeout 5" */
  failureText: string;
}

const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

function luaScript(load: WrkLoad, dir: string): string {
  const headers = Object.entries(load.headers)
    .map(([k, v]) => `  [${luaString(k)}] = ${luaString(v)},`)
    .join('\n');
  return `local headers = {\n${headers}\n}
local reqs = {}
local i = 0
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("offset", counter * 7)
end
init = function(args)
  for k = 1, ${load.bodies.length} do
    local f = io.open(${luaString(dir)} .. "/" .. k .. ".json", "rb")
    reqs[k] = wrk.format(${luaString(load.method ?? 'POST')}, nil, headers, f:read("*a"))
    f:close()
  end
  i = (offset or 0) % #reqs
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
${load.delayMs ? `delay = function()\n  return ${Math.round(load.delayMs)}\nend\n` : ''}`;
}

function millis(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return Number.NaN;
  const scale = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[2] as 'us' | 'ms' | 's' | 'm'];
  return Number(m[1]) * scale;
}

export function parseWrk(out: string, seconds: number): WrkResult {
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const duration = millis(/requests in ([\d.]+\w+),/.exec(out)?.[1] ?? `${seconds}s`) / 1000;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return {
    requests,
    seconds: duration,
    perSecond: (requests - non2xx) / duration,
    p50: millis(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? 'NaN'),
    p99: millis(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? 'NaN'),
    failures: non2xx + socketErrors,
    failureText: `non-2xx ${non2xx}${socket ? `, socket errors ${socket.slice(1).join('/')} (connect/read/write/timeout)` : ''}`,
  };
}

/** Runs wrk against one URL; resolves with its parsed figures. */
export async function runWrk(load: WrkLoad): Promise<WrkResult> {
  const wrk = ensureWrk();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  try {
    load.bodies.forEach((body, k) => writeFileSync(path.join(dir, `${k + 1}.json`), body));
    const script = path.join(dir, 'load.lua');
    writeFileSync(script, luaScript(load, dir));
    const args = [
      '-t',
      String(load.threads ?? 2),
      '-c',
      String(load.connections),
      '-d',
      `${Math.max(1, Math.round(load.seconds))}s`,
      '--latency',
      '--timeout',
      '30s',
      '-s',
      script,
      load.url,
    ];
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`)),
      );
    });
    return parseWrk(out, load.seconds);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
