// Every widget type in a real Chromium, drawn from series read from a real server: points go in
// through the batch API, the series comes back from GET /api/v1/metrics, and a test-only page
// (widget-harness/) renders the fixture's grid with WidgetView. Screenshots land in a temp dir
// (WIDGET_SCREENSHOTS=dir keeps them somewhere else).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, drawnBox, launchBrowser } from './browser';
import { createProjectWithToken, request, startTestServer, type TestServer } from '../helpers/server';
import * as F from './widget-harness/fixture';

// What the harness page (web/widgets/harness/entry.tsx) puts on window; this file has no DOM types.
declare const window: { renderWidgets(config: unknown): void; zoomCalls: Array<[number, number]> };

const skip = browserSkipReason();
const HERE = path.dirname(fileURLToPath(import.meta.url));

async function buildHarness(dir: string): Promise<string> {
  await esbuild.build({
    entryPoints: [path.join(HERE, '..', '..', 'web', 'widgets', 'harness', 'entry.tsx')],
    outfile: path.join(dir, 'harness.js'),
    bundle: true,
    format: 'iife', // a classic script: file:// pages may not load modules
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
  });
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="harness.css"></head><body><div id="root"></div><script src="harness.js"></script></body></html>';
  writeFileSync(path.join(dir, 'index.html'), html);
  return `file://${path.join(dir, 'index.html')}`;
}

async function seriesFrom(server: TestServer, agent: { sourceToken: string; sourceId: string }) {
  const as = { token: agent.sourceToken, sourceId: agent.sourceId };
  const batch = await request(server, 'POST', '/api/v1/metrics/batch', { points: F.points() }, as);
  assert.equal(batch.status, 201, batch.text);
  const read = async (from: string, to: string) => {
    const q = new URLSearchParams({ key: F.KEY, from, to, granularity: '1h' });
    const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, as);
    assert.equal(res.status, 200, res.text);
    return res.body.data as { at: string[]; values: Record<string, unknown>[] };
  };
  return { series: await read(F.FROM, F.TO), previous: await read(F.PREV_FROM, F.PREV_TO) };
}

describe('widgets in Chromium', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  let config: Record<string, unknown>;

  const state = (id: string) => page.getAttribute(`[data-widget-id="${id}"]`, 'data-state');
  const attr = (selector: string, name: string) => page.getAttribute(selector, name);
  const draw = async (extra: Record<string, unknown> = {}) => {
    await page.evaluate((c) => window.renderWidgets(c), { ...config, ...extra });
    if (!extra.loading && !extra.error)
      await page.waitForSelector('[data-widget-id="ts-line"] canvas', { timeout: 5000 });
  };

  before(async () => {
    server = await startTestServer();
    const agent = await createProjectWithToken(server, {
      time_zone: 'Europe/Bratislava',
      granularities: ['1h', '1d'],
    });
    const data = await seriesFrom(server, agent);
    dir = mkdtempSync(path.join(os.tmpdir(), 'widget-harness-'));
    const url = await buildHarness(dir);
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 2200 } });
    page.on('pageerror', (err) => assert.fail(`page error: ${err.message}`));
    await page.goto(url);
    config = {
      ...data,
      widgets: F.widgets(),
      from: Date.parse(F.FROM),
      to: Date.parse(F.TO),
      granularity: '1h',
      timeZone: 'Europe/Bratislava',
      now: Date.parse(F.NOW),
      theme: 'light',
    };
    await draw();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('every widget with data is ready; a path without data shows the empty state naming it', async () => {
    for (const w of F.widgets()) {
      const expected = w.id === 'kpi-empty' ? 'empty' : w.id === 'bad-type' ? 'error' : 'ready';
      assert.equal(await state(w.id), expected, w.id);
    }
    const empty = await page.textContent('[data-widget-id="kpi-empty"]');
    assert.match(empty!, /No data in this range/);
    assert.match(empty!, /nothing\.here/);
    assert.equal(await state('grp-kpi'), 'ready');
    assert.equal(await state('grp-text'), 'ready');
  });

  test('kpi: sum, split against the previous day, goal progress', async () => {
    assert.equal(
      await attr('[data-widget-id="kpi-sum"] .kpi__value', 'data-value'),
      String(F.EXPECTED.countSum),
    );
    assert.equal(await page.textContent('[data-widget-id="kpi-sum"] .kpi__value'), '300');
    assert.ok(await page.$('[data-widget-id="kpi-sum"] svg.sparkline polyline'));
    const change = Number(await attr('[data-widget-id="kpi-split"] .kpi__split', 'data-change'));
    assert.equal(change, ((F.EXPECTED.countSum - F.EXPECTED.previousSum) / F.EXPECTED.previousSum) * 100);
    assert.match(
      (await page.textContent('[data-widget-id="kpi-split"] .kpi__split'))!,
      /\+525 %.*\+252.*vs 48 before/,
    );
    assert.equal(
      Number(await attr('[data-widget-id="kpi-goal"] .kpi__goal', 'data-progress')),
      F.EXPECTED.countMean / 20,
    );
    assert.equal(await attr('[data-widget-id="grp-kpi"] .kpi__value', 'data-value'), '24');
  });

  test('category: bars, pie and donut slices of the country map', async () => {
    const bars = await page.$$eval('[data-widget-id="cat-bar"] .bars__row', (rows) =>
      rows.map((r) => [r.getAttribute('data-name'), Number(r.getAttribute('data-value'))]),
    );
    assert.deepEqual(bars, [
      ['US', 48],
      ['SK', 24],
      ['UK', 5],
    ]);
    for (const id of ['cat-pie', 'cat-donut']) {
      const slices = await page.$$eval(`[data-widget-id="${id}"] path.pie__slice`, (ps) =>
        ps.map((p) => [p.getAttribute('data-name'), Number(p.getAttribute('data-value'))]),
      );
      assert.deepEqual(
        slices,
        [
          ['US', 48],
          ['SK', 24],
          ['UK', 5],
        ],
        id,
      );
    }
    assert.equal(await page.textContent('[data-widget-id="cat-donut"] .pie__total'), '77');
  });

  test('list: alpha sort with a limit, and by value', async () => {
    const names = (id: string) =>
      page.$$eval(`[data-widget-id="${id}"] .bars__row`, (rows) =>
        rows.map((r) => r.getAttribute('data-name')),
      );
    assert.deepEqual(await names('list-alpha'), ['SK', 'UK']);
    assert.deepEqual(await names('list-desc'), ['US', 'SK', 'UK']);
  });

  test('table: paths as rows, 24 hourly columns newest last, exact values', async () => {
    const headers = await page.$$eval('[data-widget-id="tbl"] thead th', (ths) =>
      ths.map((t) => t.textContent),
    );
    assert.equal(headers.length, 25);
    assert.equal(headers[1], '01:00'); // 00:00Z is 01:00 in Bratislava
    assert.equal(headers[24], '25 Jan'); // 23:00Z is midnight there: the day is named
    const count = await page.$$eval('[data-widget-id="tbl"] tbody tr:first-child td', (tds) =>
      tds.map((t) => t.textContent),
    );
    assert.deepEqual([count[0], count[23]], ['1', '24']);
    const current = await page.$$eval(
      '[data-widget-id="tbl"] tbody tr:first-child td.is-current',
      (tds) => tds.length,
    );
    assert.equal(current, 1);
  });

  test('expression rows: a / b per bucket, in a table and a chart', async () => {
    const cells = await page.$$eval('[data-widget-id="tbl-expr"] tbody tr td', (tds) =>
      tds.map((t) => t.textContent),
    );
    assert.deepEqual([cells[0], cells[1], cells[23]], F.EXPECTED.ratio.map(String));
    assert.equal(await page.textContent('[data-widget-id="tbl-expr"] tbody th'), 'ratio');
    assert.equal(await attr('[data-widget-id="ts-expr"] .ts__plot', 'data-series-count'), '1');
    assert.deepEqual(
      await page.$$eval('[data-widget-id="ts-expr"] .legend__name', (e) => e.map((n) => n.textContent)),
      ['API per order'],
    );
  });

  test('timeseries: a legend button hides and shows its series', async () => {
    const plot = '[data-widget-id="ts-line"] .ts__plot';
    assert.equal(await attr(plot, 'data-series-count'), '2');
    // The series share `requests.`: the legend names them by the rest, the head shows the prefix once.
    assert.deepEqual(
      await page.$$eval('[data-widget-id="ts-line"] .legend__name', (e) => e.map((n) => n.textContent)),
      ['api', 'web'],
    );
    assert.equal(await page.textContent('[data-widget-id="ts-line"] .widget__prefix'), 'requests.*');
    const web = page.locator('[data-widget-id="ts-line"] .legend__item[data-source="requests.web"]');
    assert.equal(await web.getAttribute('aria-pressed'), 'true');
    await web.click();
    await page.waitForSelector(`${plot}[data-series-count="1"]`, { timeout: 2000 });
    assert.equal(await web.getAttribute('aria-pressed'), 'false');
    await web.click();
    await page.waitForSelector(`${plot}[data-series-count="2"] canvas`, { timeout: 2000 });
    assert.equal(await web.getAttribute('aria-pressed'), 'true');
  });

  test('timeseries: hovering shows exact values of the bucket in the source zone', async () => {
    // A locator, not a handle: the legend test rebuilt this chart, maybe after its last check.
    const box = await drawnBox(page.locator('[data-widget-id="ts-line"] .u-over'));
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    const text = await page.textContent('[data-widget-id="ts-line"] .ts-readout');
    assert.match(text!, /Sat 24 Jan, 01:00/);
    assert.match(text!, /api\s*10/);
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
    assert.match(
      (await page.textContent('[data-widget-id="ts-line"] .ts-readout'))!,
      /still filling.*api\s*33/,
    );
  });

  test('timeseries: cursors move together across charts; the read-out stays on the hovered one', async () => {
    const box = await drawnBox(page.locator('[data-widget-id="ts-line"] .u-over'));
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    const cursorLeft = (id: string) =>
      page
        .locator(`[data-widget-id="${id}"] .u-cursor-x`)
        .evaluate(
          (el) =>
            parseFloat(
              (el as unknown as { style: { transform: string } }).style.transform.replace(/^translate\(/, ''),
            ) || 0,
        );
    assert.ok((await cursorLeft('ts-area')) > 0, 'the synced chart moved its cursor');
    assert.equal(await page.locator('[data-widget-id="ts-area"] .ts-readout').isVisible(), false);
    assert.equal(await page.locator('[data-widget-id="ts-line"] .ts-readout').isVisible(), true);
    await page.mouse.move(0, 0);
  });

  test('timeseries: dragging across a chart asks the shell to zoom to the dragged range', async () => {
    await page.evaluate(() => (window.zoomCalls = []));
    const box = await drawnBox(page.locator('[data-widget-id="ts-area"] .u-over'));
    const [x1, x2] = [box.x + box.width * 0.25, box.x + box.width * 0.75];
    await page.mouse.move(x1, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(x2, box.y + 30, { steps: 5 });
    await page.mouse.up();
    const calls = await page.evaluate(() => window.zoomCalls);
    assert.equal(calls.length, 1);
    const [from, to] = calls[0]!;
    const first = Date.parse(F.FROM);
    const span = 23 * 3_600_000; // the line chart's axis runs from the first bucket to the last
    const near = (a: number, b: number) => Math.abs(a - b) < 10 * 60_000;
    assert.ok(near(from, first + span * 0.25), `from ${new Date(from).toISOString()}`);
    assert.ok(near(to, first + span * 0.75), `to ${new Date(to).toISOString()}`);
  });

  test('distribution, heatmaps and the chart types draw what the data holds', async () => {
    const buckets = await page.$$eval('[data-widget-id="dist"] .histogram__bucket', (bs) =>
      bs.map((b) => [
        b.getAttribute('data-bucket'),
        Number(b.querySelector('.histogram__bar')!.getAttribute('data-value')),
      ]),
    );
    assert.deepEqual(buckets, [
      ['10', 72],
      ['50', 48],
      ['100', 0],
      ['100+', 12],
    ]);
    const matrix = await page.$$eval('[data-widget-id="heat-matrix"] rect', (rs) =>
      rs.map((r) => Number(r.getAttribute('data-value'))),
    );
    assert.deepEqual(matrix, [36, 24, 24, 48]); // y "2" on top: [10.2, 20.2], then y "1": [10.1, 20.1]
    assert.equal(await page.$$eval('[data-widget-id="heat-time"] rect', (rs) => rs.length), 48);
    for (const id of ['ts-bar', 'ts-dots', 'ts-norm'])
      assert.ok(await page.$(`[data-widget-id="${id}"] canvas`), id);
    assert.equal(await page.$('[data-widget-id="ts-dots"] .legend'), null);
  });

  test('a broken expression row is named under the rows that still draw; an unknown type is an error', async () => {
    assert.match(
      (await page.textContent('[data-widget-id="bad-expr"] .widget__warning'))!,
      /Row b \(a \+ zz\): Unknown variable zz/,
    );
    assert.equal(await page.$$eval('[data-widget-id="bad-expr"] tbody tr', (rows) => rows.length), 1);
    assert.match((await page.textContent('[data-widget-id="bad-type"]'))!, /Unknown widget type "gauge"/);
  });

  test("a theme change redraws the charts in the theme's series colours", async () => {
    // Pixels of the line chart close to each theme's --series-1 (harness.css).
    const count = (rgb: number[]) =>
      page.locator('[data-widget-id="ts-line"] canvas').evaluate((c, [r, g, b]) => {
        const canvas = c as unknown as {
          width: number;
          height: number;
          getContext(t: '2d'): {
            getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
          };
        };
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let n = 0;
        for (let i = 0; i < data.length; i += 4)
          if (
            Math.abs(data[i]! - r!) + Math.abs(data[i + 1]! - g!) + Math.abs(data[i + 2]! - b!) < 24 &&
            data[i + 3]! > 200
          )
            n++;
        return n;
      }, rgb);
    const LIGHT = [0x2f, 0x6f, 0xde];
    const DARK = [0x6b, 0x9c, 0xf5];
    assert.ok((await count(LIGHT)) > 20);
    await draw({ theme: 'dark' });
    assert.equal(await count(LIGHT), 0);
    assert.ok((await count(DARK)) > 20);
    await draw({ theme: 'light' });
  });

  test('kpi split while the previous period is still loading', async () => {
    await draw({ previous: null });
    assert.match(
      (await page.textContent('[data-widget-id="kpi-split"] .kpi__split'))!,
      /previous period loading/,
    );
    await draw();
  });

  test('loading and error states', async () => {
    await draw({ loading: true });
    assert.equal(await state('kpi-sum'), 'loading');
    assert.equal(await state('text-center'), 'ready');
    await draw({ loading: false, error: 'The series could not be read (503)' });
    assert.equal(await state('ts-line'), 'error');
    assert.match((await page.textContent('[data-widget-id="ts-line"]'))!, /503/);
    await draw({ error: null });
    assert.equal(await state('ts-line'), 'ready');
  });

  test('on a phone every widget takes the full width and charts follow their new size', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await draw({ theme: 'light' });
    const width = await page
      .locator('[data-widget-id="ts-line"] canvas')
      .evaluate((c) => c.getBoundingClientRect().width);
    assert.ok(width > 300 && width < 390, `chart width ${width}`);
    await page.screenshot({
      path: path.join(process.env.WIDGET_SCREENSHOTS ?? dir, 'widgets-phone.png'),
      fullPage: false,
    });
    await page
      .locator('[data-widget-id="ts-bar"]')
      .screenshot({ path: path.join(process.env.WIDGET_SCREENSHOTS ?? dir, 'widgets-phone-chart.png') });
    await page
      .locator('[data-widget-id="cat-donut"]')
      .screenshot({ path: path.join(process.env.WIDGET_SCREENSHOTS ?? dir, 'widgets-phone-donut.png') });
    await page.setViewportSize({ width: 1280, height: 2200 });
  });

  test('screenshots in light and dark', async () => {
    const out = process.env.WIDGET_SCREENSHOTS ?? dir;
    for (const theme of ['light', 'dark'] as const) {
      await draw({ theme });
      // The cursor over one chart shows its read-out and moves the other charts' cursors too.
      const box = await drawnBox(page.locator('[data-widget-id="ts-line"] .u-over'));
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
      await page.waitForTimeout(100);
      await page.screenshot({ path: path.join(out, `widgets-${theme}.png`), fullPage: true });
      await page.screenshot({
        path: path.join(out, `widgets-${theme}-top.png`),
        clip: { x: 0, y: 0, width: 1280, height: 720 },
      });
      const height = await page.evaluate(
        () =>
          (globalThis as unknown as { document: { body: { scrollHeight: number } } }).document.body
            .scrollHeight,
      );
      await page.screenshot({
        path: path.join(out, `widgets-${theme}-bottom.png`),
        fullPage: true,
        clip: { x: 0, y: height - 720, width: 1280, height: 720 },
      });
    }
  });
});
