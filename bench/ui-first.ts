// When a dashboard page's first metrics read leaves, and what comes before it (SPEC 10: within
// 150 ms of navigation): bench/ui.ts's 12-widget dashboard over 7 days, each run in a fresh browser
// context (empty cache, signed-in cookie kept), the page's resource timings from navigation start:
// the HTML's answer, the stylesheet and scripts, the dashboard and sources reads and the first
// series read. Several checkouts can be compared in the same conditions: each one's service runs
// side by side and the runs alternate between them.
// Usage: node --import tsx bench/ui-first.ts [runs=15] [checkout ...]   (default: this checkout)
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { setupDemo, type DemoInfo } from '../src/demo/setup';
import { launchBrowser } from '../test/browser/browser';
import { signIn } from '../test/browser/demo-pages';
import { fmt } from './helpers';
import { benchGridFor } from './ui-grid';

const RUNS = Number(process.argv[2] ?? 15);
const ROOTS = process.argv.slice(3).map((r) => path.resolve(r));
if (ROOTS.length === 0) ROOTS.push(path.resolve(import.meta.dirname, '..'));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

interface Service {
  root: string;
  url: string;
  child: ChildProcess;
  dataDir: string;
}

/** `service serve` of one checkout (its .build/web must be built), through tsx as npm start runs it. */
async function startService(root: string): Promise<Service> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-'));
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=8', '--import', 'tsx', 'src/main.ts', 'serve', '--port', '0', '--data', dataDir],
    { cwd: root, env: { ...process.env, SERVICE_LOG_LEVEL: 'error' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${root}: the service exited early (${code}): ${out}`)));
  });
  child.removeAllListeners('exit');
  return { root, url, child, dataDir };
}

async function stopService(s: Service): Promise<void> {
  await new Promise<void>((resolve) => {
    s.child.once('exit', () => resolve());
    s.child.kill('SIGTERM');
  });
  rmSync(s.dataDir, { recursive: true, force: true });
}

async function createBenchDashboard(demo: DemoInfo): Promise<string> {
  const res = await fetch(`${demo.url}/api/v1/dashboards`, {
    method: 'POST',
    headers: { authorization: `Bearer ${demo.userToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Bench: 12 widgets, 7 days by the hour',
      key: 'shop::web',
      source: { type: 'project', id: demo.projectId },
      default_timeframe: '7d',
      default_granularity: '1h',
      payload: { grid: benchGridFor() },
    }),
  });
  const body = (await res.json()) as { data: { id: string } };
  if (res.status !== 201) throw new Error(`bench dashboard refused: ${res.status}`);
  return body.data.id;
}

/** Milestones of one navigation, ms from its start (the page's performance.timeOrigin). */
interface Milestones {
  [name: string]: number;
}

const NAMES: [string, RegExp][] = [
  ['css', /\/assets\/app\.[0-9a-f]+\.css$/],
  ['boot', /\/assets\/boot\.[0-9a-f]+\.js$/],
  ['app', /\/assets\/app\.[0-9a-f]+\.js$/],
  ['dashboard', /\/api\/v1\/dashboards\/[^/?]+$/],
  ['sources', /\/api\/v1\/bootstrap\/sources$/],
  ['session', /\/api\/v1\/(session|bootstrap\/me)$/],
];

async function navigateOnce(browser: Browser, url: string, state: unknown): Promise<Milestones> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    storageState: state as never,
  });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    // until the first series read has answered (the rest of the drawing is bench/ui.ts's)
    await page.waitForFunction(
      () => performance.getEntriesByType('resource').some((e) => /\/api\/v1\/.*metrics/.test(e.name)),
      undefined,
      { polling: 20, timeout: 60_000 },
    );
    const entries = (await page.evaluate(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const res = performance.getEntriesByType('resource').map((e) => ({
        name: e.name, start: e.startTime, end: e.responseEnd,
      }));
      return { html: { start: nav.requestStart, end: nav.responseEnd, parsed: nav.domInteractive }, res };
    })()`)) as {
      html: { start: number; end: number; parsed: number };
      res: { name: string; start: number; end: number }[];
    };
    const m: Milestones = { 'html sent': entries.html.start, 'html in': entries.html.end };
    for (const [name, re] of NAMES) {
      const e = entries.res.find((r) => re.test(new URL(r.name).pathname));
      if (!e) continue;
      m[`${name} sent`] = e.start;
      m[`${name} in`] = e.end;
    }
    const metrics = entries.res
      .filter((r) => /\/api\/v1\/.*metrics/.test(r.name))
      .sort((a, b) => a.start - b.start)[0];
    m['first metrics sent'] = metrics?.start ?? Number.NaN;
    m['html parsed'] = entries.html.parsed;
    return m;
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  console.log(
    `ui first request; ${os.cpus().length} cores; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const services: Service[] = [];
  const browser = await launchBrowser();
  try {
    const targets: { label: string; url: string; state: unknown }[] = [];
    for (const root of ROOTS) {
      // On a loaded machine a demo's upload can lose a connection: then again on a fresh service.
      let demo: DemoInfo | null = null;
      let s!: Service;
      for (let attempt = 1; !demo; attempt++) {
        s = await startService(root);
        try {
          demo = await setupDemo(s.url);
        } catch (err) {
          await stopService(s);
          if (attempt === 3) throw err;
          console.log(`${path.basename(root)}: demo set-up failed (${(err as Error).message}); again`);
        }
      }
      services.push(s);
      const id = await createBenchDashboard(demo);
      const context = await browser.newContext();
      const page = await context.newPage();
      await signIn(page, demo.url, demo.email, demo.password);
      const state = await context.storageState();
      await context.close();
      targets.push({ label: path.basename(s.root), url: `${demo.url}/d/${id}`, state });
    }
    for (const t of targets) await navigateOnce(browser, t.url, t.state); // warm-up
    const runs = targets.map(() => [] as Milestones[]);
    for (let i = 0; i < RUNS; i++) {
      // alternating, and in turn first, so that no checkout always follows the same one
      for (let j = 0; j < targets.length; j++) {
        const k = (i + j) % targets.length;
        runs[k]!.push(await navigateOnce(browser, targets[k]!.url, targets[k]!.state));
      }
    }
    console.log(
      `load after: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    targets.forEach((t, k) => {
      const list = runs[k]!;
      const first = list.map((m) => m['first metrics sent']!);
      console.log(
        `${t.label}: first metrics request median ${fmt(median(first), 1)} ms ` +
          `(min ${fmt(Math.min(...first), 1)}, max ${fmt(Math.max(...first), 1)}, ${RUNS} runs)`,
      );
      const keys = [...new Set(list.flatMap((m) => Object.keys(m)))]
        .map((key) => ({ key, at: median(list.map((m) => m[key] ?? Number.NaN)) }))
        .sort((a, b) => a.at - b.at);
      console.log(`  medians: ${keys.map(({ key, at }) => `${key} ${fmt(at, 1)}`).join(', ')}`);
    });
  } finally {
    await browser.close();
    await Promise.all(services.map(stopService));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
