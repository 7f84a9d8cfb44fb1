// Screenshots of the interface on the demo's data: a dashboard in light and dark, the same on a
// phone, explore and the widget editor. With SCREENSHOTS=1 they are written to docs/screenshots/
// (committed, shown in the README); otherwise to a temp folder, so the test still proves every
// widget reaches its ready state. Skips with a message when Chromium or the interface is missing.
//   SCREENSHOTS=1 node --import tsx --test test/browser/screenshots.test.ts
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server';
import { setupDemo, type DemoInfo } from '../../src/demo/setup';
import { ordersDashboard, trafficDashboard } from '../../src/demo/dashboards';
import { browserSkipReason, launchBrowser } from './browser';
import { backgroundLuminance, interfaceSkipReason, signIn, unsettled, waitForWidgets } from './demo-pages';

const ROOT = path.join(import.meta.dirname, '..', '..');
const KEEP = process.env.SCREENSHOTS === '1';
const OUT = KEEP
  ? path.join(ROOT, 'docs', 'screenshots')
  : mkdtempSync(path.join(os.tmpdir(), 'screenshots-'));
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
// Top-level widgets of each demo dashboard: the page shows at least these (group children on top).
const TRAFFIC_WIDGETS = trafficDashboard().payload.grid.length;
const ORDERS_WIDGETS = ordersDashboard(1).payload.grid.length;

describe('screenshots of the demo', () => {
  let skip: string | false = browserSkipReason();
  let server: TestServer | null = null;
  let browser: Browser | null = null;
  let demo: DemoInfo;

  before(async () => {
    if (skip) return;
    server = await startTestServer();
    skip = await interfaceSkipReason(server.url);
    if (skip) return;
    demo = await setupDemo(server.url);
    browser = await launchBrowser();
    mkdirSync(OUT, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    if (!KEEP) rmSync(OUT, { recursive: true, force: true });
  });

  /** A signed-in page at a viewport and colour scheme; the interface's theme follows the system. */
  async function page(
    t: TestContext,
    viewport: { width: number; height: number },
    colorScheme: 'light' | 'dark',
  ): Promise<Page | null> {
    if (skip) {
      t.skip(skip);
      return null;
    }
    const context: BrowserContext = await browser!.newContext({
      viewport,
      colorScheme,
      deviceScaleFactor: 1,
    });
    t.after(() => context.close());
    const p = await context.newPage();
    await signIn(p, server!.url, demo.email, demo.password);
    return p;
  }

  async function dashboard(t: TestContext, file: string, viewport: typeof DESKTOP, scheme: 'light' | 'dark') {
    const p = await page(t, viewport, scheme);
    if (!p) return;
    await p.goto(`${server!.url}/d/${demo.dashboards[0]!.id}`);
    const { states } = await waitForWidgets(p, TRAFFIC_WIDGETS);
    assert.deepEqual(unsettled(states), [], 'every widget of the traffic dashboard is ready');
    // The default theme is `system`: the page must follow the emulated colour scheme.
    const luminance = await backgroundLuminance(p);
    if (scheme === 'dark')
      assert.ok(luminance < 0.2, `dark scheme, but the background's luminance is ${luminance.toFixed(2)}`);
    else
      assert.ok(luminance > 0.6, `light scheme, but the background's luminance is ${luminance.toFixed(2)}`);
    await p.screenshot({ path: path.join(OUT, file) });
  }

  test('dashboard, light, 1280x800', (t) => dashboard(t, 'dashboard-light.png', DESKTOP, 'light'));
  test('dashboard, dark, 1280x800', (t) => dashboard(t, 'dashboard-dark.png', DESKTOP, 'dark'));
  test('dashboard, phone, 390x844', (t) => dashboard(t, 'dashboard-phone.png', PHONE, 'light'));

  test('orders dashboard with its country segment, light, 1280x800', async (t) => {
    const p = await page(t, DESKTOP, 'light');
    if (!p) return;
    await p.goto(`${server!.url}/d/${demo.dashboards[1]!.id}`);
    const { states } = await waitForWidgets(p, ORDERS_WIDGETS);
    assert.deepEqual(unsettled(states), [], 'every widget of the orders dashboard is ready');
    await p.screenshot({ path: path.join(OUT, 'dashboard-orders.png') });
  });

  test('explore, 1280x800', async (t) => {
    const p = await page(t, DESKTOP, 'light');
    if (!p) return;
    await p.goto(`${server!.url}/explore`);
    // Pick the shop's traffic key from the source's key list (counted from the system key).
    const listed = p.getByText('shop::web', { exact: true }).first();
    await listed.waitFor({ timeout: 15_000 });
    await listed.click();
    await p.waitForLoadState('networkidle');
    if ((await p.locator('.widget[data-widget-id]').count()) > 0) {
      const { states } = await waitForWidgets(p);
      assert.deepEqual(unsettled(states, ['ready', 'empty']), []);
    }
    await p.screenshot({ path: path.join(OUT, 'explore.png') });
  });

  test('widget editor, 1280x800', async (t) => {
    const p = await page(t, DESKTOP, 'light');
    if (!p) return;
    await p.goto(`${server!.url}/d/${demo.dashboards[0]!.id}`);
    const { states } = await waitForWidgets(p, TRAFFIC_WIDGETS);
    assert.deepEqual(unsettled(states), []);
    // Edit mode, then the edit control of the mean-latency chart (a series row with an expression).
    // The cell's tools carry the widget's title; found by name, the click does not depend on the
    // widget's own element, which edit mode may draw again (under CI load, for seconds).
    await p.getByRole('button', { name: /^edit/i }).first().click({ timeout: 5_000 });
    await p.getByRole('button', { name: 'Edit Mean latency', exact: true }).click({ timeout: 15_000 });
    await p.getByRole('dialog').or(p.locator('form')).first().waitFor({ timeout: 15_000 });
    await p.screenshot({ path: path.join(OUT, 'editor.png') });
  });
});
