// Start-up time: from spawning the process to the first 200 from GET /api/v1/health (asked as soon
// as the process logs its `listening on` line), N runs each, for the single executable (fresh data
// directory, so it also extracts its native addons; and a reused one) and for `npm start`'s command
// (node --import tsx src/main.ts).
// Usage: node bench/startup.mjs [runs=10] [path/to/service=dist/service]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.argv[2] ?? 10);
const EXECUTABLE = path.resolve(process.argv[3] ?? path.join(ROOT, 'dist', 'service'));
const TIMEOUT_MS = 20_000;

/** Resolves with the base URL once the process logs `listening on http://HOST:PORT`. */
function listeningUrl(child, command) {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(
      () => reject(new Error(`${command} not listening in ${TIMEOUT_MS} ms`)),
      TIMEOUT_MS,
    );
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+:\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`${command} exited with ${code} before listening`)));
  });
}

/** Milliseconds from spawn to the first 200 on /health; the process is stopped afterwards. */
async function timeOneStart(command, args, dataDir) {
  const started = performance.now();
  // Waiting for the log line instead of polling keeps the benchmark from taking CPU from the server.
  const argv = [...args, '--port', '0', '--data', dataDir];
  const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const base = await listeningUrl(child, command);
    const res = await fetch(`${base}/api/v1/health`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${command}: health answered ${res.status}`);
    return performance.now() - started;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function measure(label, command, args, { reuseData = false } = {}) {
  const dirs = [];
  const newDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'service-startup-'));
    dirs.push(dir);
    return dir;
  };
  const shared = reuseData ? newDir() : null;
  if (shared) await timeOneStart(command, args, shared); // first start extracts and creates the database
  const times = [];
  try {
    for (let i = 0; i < RUNS; i++) times.push(await timeOneStart(command, args, shared ?? newDir()));
  } finally {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  const median = RUNS % 2 ? times[(RUNS - 1) / 2] : (times[RUNS / 2 - 1] + times[RUNS / 2]) / 2;
  const fmt = (ms) => `${ms.toFixed(0).padStart(5)} ms`;
  console.log(`${label.padEnd(44)} min ${fmt(times[0])}  median ${fmt(median)}  max ${fmt(times.at(-1))}`);
}

async function main() {
  console.log(`start-up to first 200 on /api/v1/health, ${RUNS} runs each (${os.cpus().length} cores)`);
  if (fs.existsSync(EXECUTABLE)) {
    await measure('executable, fresh data dir', EXECUTABLE, ['serve']);
    await measure('executable, existing data dir', EXECUTABLE, ['serve'], { reuseData: true });
  } else {
    console.log(`(no ${path.relative(ROOT, EXECUTABLE)}: run npm run build to measure the executable)`);
  }
  const tsxArgs = ['--import', 'tsx', 'src/main.ts', 'serve'];
  await measure('node --import tsx src/main.ts, fresh data dir', process.execPath, tsxArgs);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
