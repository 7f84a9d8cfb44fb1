// `service demo`: the setup runs against a real server on a temp data dir, and what a person gets
// is checked through the API: the printed account signs in, both dashboards exist and use every
// widget type, every path a widget names has data, and the keys hold 30 days of data.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { DEMO_EMAIL, setupDemo, type DemoInfo } from '../../src/demo/setup';
import { startLiveFeed } from '../../src/demo/live';
import { WIDGET_TYPES } from '../../src/domain/dashboards/widgets';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-20T15:42:17Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

type Widget = Record<string, any>;
const flatten = (grid: Widget[]): Widget[] => grid.flatMap((w) => [w, ...flatten(w.children ?? [])]);

/** Dot paths of every numeric leaf in a list of nested value maps. */
function leafPaths(values: Record<string, unknown>[]): Set<string> {
  const paths = new Set<string>();
  const walk = (node: unknown, prefix: string) => {
    if (typeof node === 'number') paths.add(prefix);
    else if (node && typeof node === 'object')
      for (const [k, v] of Object.entries(node)) walk(v, prefix ? `${prefix}.${k}` : k);
  };
  values.forEach((v) => walk(v, ''));
  return paths;
}

/** The paths a widget reads: `path`, `paths` and the path rows of `series`. */
function widgetPaths(w: Widget): string[] {
  const rows = (w.series ?? []).filter((r: Widget) => r.kind === 'path').map((r: Widget) => r.path as string);
  return [...(w.path ? [w.path] : []), ...(w.paths ?? []), ...rows];
}

describe('service demo setup', () => {
  let server: TestServer;
  let demo: DemoInfo;
  const user = () => ({ token: demo.userToken });
  const source = () => ({ token: demo.sourceToken, sourceId: demo.projectId });

  before(async () => {
    server = await startTestServer();
    demo = await setupDemo(server.url, { now: NOW, seed: 7 });
  });
  after(() => server.stop());

  test('the printed account signs in and belongs to the demo organization', async () => {
    assert.equal(demo.email, DEMO_EMAIL);
    assert.match(demo.password, /^demo-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    const login = await request(server, 'POST', '/api/v1/bootstrap/login', {
      email: demo.email,
      password: demo.password,
    });
    assert.equal(login.status, 201, login.text);
    assert.equal(login.body.data.organization.id, demo.organizationId);
    const sources = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, user());
    assert.equal(sources.body.data.projects[0].time_zone, 'Europe/Bratislava');
  });

  test('two dashboards in one group, together using every widget type and the main options', async () => {
    const list = await request(server, 'GET', '/api/v1/dashboards', undefined, user());
    assert.equal(list.status, 200, list.text);
    const dashboards = list.body.data as Widget[];
    assert.deepEqual(
      dashboards.map((d) => d.name),
      ['Shop traffic', 'Orders by country'],
    );
    assert.ok(dashboards.every((d) => d.group_id === demo.groupId));
    const widgets = dashboards.flatMap((d) => flatten(d.payload.grid));
    assert.deepEqual(new Set(widgets.map((w) => w.type)), new Set(WIDGET_TYPES));
    const has = (pred: (w: Widget) => boolean, what: string) => assert.ok(widgets.some(pred), what);
    for (const subtype of ['number', 'split', 'goal'])
      has((w) => w.type === 'kpi' && w.subtype === subtype && w.timeseries, `kpi ${subtype} + sparkline`);
    for (const chart of ['line', 'area', 'bar', 'dots'])
      has((w) => w.type === 'timeseries' && w.chart_type === chart, `timeseries ${chart}`);
    for (const chart of ['bar', 'pie', 'donut'])
      has(
        (w) => w.type === 'category' && w.chart_type === chart && w.path.endsWith('.*'),
        `category ${chart}`,
      );
    has((w) => w.stacked === true && w.legend === true, 'stacked with legend');
    has((w) => w.normalized === true, 'normalized');
    has((w) => w.type === 'list' && typeof w.limit === 'number' && w.sort === 'desc', 'list limit + sort');
    has((w) => w.type === 'list' && w.sort === 'alpha', 'list alpha');
    has((w) => w.type === 'heatmap' && w.mode === '3d', 'heatmap 3d');
    has(
      (w) =>
        (w.series ?? []).some((r: Widget) => r.kind === 'expression' && /\bmax\(.*sqrt\(/.test(r.expression)),
      'expression with functions',
    );
    const orders = dashboards[1]!;
    assert.equal(orders.key, 'shop::(?<country>[^:]+)::orders');
    assert.equal(orders.segments[0].name, 'country');
    assert.equal(orders.segments[0].default_value, 'all');
    assert.ok(orders.segments[0].groups[1].items.length >= 5, 'several countries');
  });

  test("every path a widget reads has data over the dashboard's default range", async () => {
    const list = await request(server, 'GET', '/api/v1/dashboards', undefined, user());
    for (const d of list.body.data as Widget[]) {
      const key = (d.key as string).replace('(?<country>[^:]+)', 'all');
      const days =
        Number.parseInt(d.default_timeframe, 10) * (d.default_timeframe.endsWith('d') ? 1 : 1 / 24);
      const q = `key=${encodeURIComponent(key)}&from=${iso(NOW - days * DAY)}&to=${iso(NOW)}&granularity=${d.default_granularity}`;
      const series = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, source());
      assert.equal(series.status, 200, series.text);
      const paths = [...leafPaths(series.body.data.values)];
      for (const w of flatten(d.payload.grid)) {
        for (const p of widgetPaths(w)) {
          const prefix = p.endsWith('.*') ? p.slice(0, -1) : `${p}.`;
          assert.ok(
            paths.some((have) => have === p || have.startsWith(prefix)),
            `${d.name} / ${w.id}: no data at ${p}`,
          );
        }
      }
    }
  });

  test('the keys hold 30 days of data up to now, every country included', async () => {
    for (const key of ['shop::web', 'shop::all::orders', 'shop::SK::orders', 'shop::HU::orders']) {
      const q = `key=${encodeURIComponent(key)}&from=${iso(NOW - 30 * DAY)}&to=${iso(NOW)}&granularity=1d`;
      const series = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, source());
      assert.equal(series.status, 200, series.text);
      const values = series.body.data.values as Record<string, any>[];
      assert.equal(values.length, 31, key);
      assert.ok(
        values.every((v) => Object.keys(v).length > 0),
        `${key}: a day without data`,
      );
    }
    // The newest minute is still filling: it has data, and nothing lies after now.
    const q = `key=shop::web&from=${iso(NOW - 120_000)}&to=${iso(NOW + 600_000)}&granularity=1m`;
    const recent = (await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, source())).body.data
      .values as Record<string, any>[];
    assert.ok(recent[2]?.requests?.count > 0, 'the current minute has requests');
    assert.ok(
      recent.slice(3).every((v) => Object.keys(v).length === 0),
      'nothing after now',
    );
  });

  test('the live feed keeps writing the time that passes after the back-fill', async () => {
    let clock = NOW;
    const auth = { authorization: `Bearer ${demo.sourceToken}`, 'x-service-source-id': demo.projectId };
    const feed = startLiveFeed(server.url, auth, demo.model, { from: NOW, everyMs: 10, now: () => clock });
    const minute = Math.ceil(NOW / 60_000) * 60_000; // the first whole minute after the back-fill
    const q = `key=shop::web&from=${iso(minute)}&to=${iso(minute + 60_000)}&granularity=1m`;
    const read = async () =>
      (await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, source())).body.data.values as any[];
    assert.deepEqual(await read(), [{}, {}]);
    clock = minute + 150_000;
    for (let i = 0; i < 100 && !((await read())[1]?.requests?.count > 0); i++)
      await new Promise((r) => setTimeout(r, 20));
    await feed.stop();
    const [first, second] = await read();
    assert.ok(first.requests.count > 100 && second.requests.count > 100, JSON.stringify([first, second]));
    assert.equal(typeof second.gauges.active_users, 'number');
  });
});

describe('service demo, the command', () => {
  test(
    'prints the URL and the sign-in, serves, and removes its temp data directory on SIGINT',
    { timeout: 60_000 },
    async () => {
      const root = path.join(import.meta.dirname, '..', '..');
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'demo', '--port', '0'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      try {
        while (!out.includes('Press Ctrl+C to stop.')) {
          if (child.exitCode !== null) assert.fail(`demo exited early: ${out}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const url = /Open\s+(http:\/\/\S+)\//.exec(out)?.[1];
        const password = /Password\s+(\S+)/.exec(out)?.[1];
        const dataDir = /Data\s+(\S+)/.exec(out)?.[1];
        assert.ok(url && password && dataDir, out);
        assert.match(out, /E-mail\s+demo@example\.com/);
        const login = await request({ url }, 'POST', '/api/v1/bootstrap/login', {
          email: 'demo@example.com',
          password,
        });
        assert.equal(login.status, 201, login.text);
        assert.ok(existsSync(path.join(dataDir, 'service.db')));
        child.kill('SIGINT');
        assert.equal(await exited, 0);
        assert.equal(existsSync(dataDir), false, 'the temp data directory is removed');
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );
});
