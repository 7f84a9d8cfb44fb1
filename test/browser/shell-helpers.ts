// Shared by the shell's browser tests: a real server with a seeded organization (a project with
// points written through the API and a dashboard on them), and a signed-in browser page.
import { after, before } from 'node:test';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { ensureWebBuilt } from '../helpers/web';
import { launchBrowser } from './browser';

export const HOUR = 3_600_000;

export interface Seeded extends ProjectAgent {
  dashboardId: string;
}

/** Hourly points over the last 2 days: orders by country, latency, and a second key. */
export async function seedOrganization(server: TestServer): Promise<Seeded> {
  const agent = await createProjectWithToken(server, {
    name: 'Web shop',
    granularities: ['1m', '1h', '1d', '1w'],
    default_timeframe: '24h',
    time_zone: 'Europe/Bratislava',
  });
  const now = Date.now();
  const points = [];
  for (let i = 0; i < 48; i++) {
    const at = new Date(now - i * HOUR).toISOString();
    points.push({
      key: 'shop::SK::orders',
      at,
      values: { count: 3 + (i % 5), revenue: 100 + i, country: { SK: 2, CZ: 1 + (i % 3) } },
    });
    points.push({ key: 'shop::CZ::orders', at, values: { count: 1, revenue: 10 } });
  }
  const batch = await request(
    server,
    'POST',
    '/api/v1/metrics/batch',
    { points },
    { token: agent.sourceToken, sourceId: agent.sourceId },
  );
  if (batch.status !== 201) throw new Error(`batch: ${batch.status} ${batch.text}`);
  const dashboard = await request(
    server,
    'POST',
    '/api/v1/dashboards',
    {
      name: 'Orders',
      key: 'shop::(?<country>[^:]+)::orders',
      source: { type: 'project', id: agent.sourceId },
      default_timeframe: '24h',
      default_granularity: '1h',
      segments: [
        {
          name: 'country',
          type: 'select',
          groups: [
            {
              label: 'Countries',
              items: [
                { label: 'Slovakia', value: 'SK' },
                { label: 'Czechia', value: 'CZ' },
              ],
            },
          ],
        },
      ],
      payload: {
        grid: [
          {
            id: 'orders',
            type: 'kpi',
            title: 'Orders',
            path: 'count',
            function: 'sum',
            x: 0,
            y: 0,
            w: 3,
            h: 2,
          },
          { id: 'revenue', type: 'timeseries', title: 'Revenue', paths: ['revenue'], x: 3, y: 0, w: 9, h: 3 },
          {
            id: 'countries',
            type: 'category',
            title: 'By country',
            path: 'country.*',
            x: 0,
            y: 2,
            w: 3,
            h: 3,
          },
        ],
      },
    },
    { token: agent.userToken },
  );
  if (dashboard.status !== 201) throw new Error(`dashboard: ${dashboard.status} ${dashboard.text}`);
  return { ...agent, dashboardId: dashboard.body.data.id };
}

export interface Harness {
  server: TestServer;
  browser: Browser;
  shots: string;
  stop(): Promise<void>;
}

/**
 * Hooks of the calling describe: before its tests a harness and an organization seeded in it, handed
 * to `use`; after them the harness stops.
 */
export function withSeededHarness(use: (harness: Harness, seeded: Seeded) => void): void {
  let harness: Harness | undefined;
  before(async () => {
    harness = await startHarness();
    use(harness, await seedOrganization(harness.server));
  });
  after(() => harness?.stop());
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  await ensureWebBuilt();
  const server = await startTestServer(env);
  const browser = await launchBrowser();
  // SHELL_SCREENSHOTS=<dir> keeps the screenshots to look at; otherwise they go with the run.
  const keep = process.env.SHELL_SCREENSHOTS;
  const shots = keep ?? mkdtempSync(path.join(os.tmpdir(), 'shell-shots-'));
  if (keep) mkdirSync(keep, { recursive: true });
  return {
    server,
    browser,
    shots,
    async stop() {
      await browser.close();
      await server.stop();
      if (!keep) rmSync(shots, { recursive: true, force: true });
    },
  };
}

/** A new session of the user of `userToken` (POST /session with it), as the cookie's value. */
export async function openSession(server: TestServer, userToken: string): Promise<string> {
  const res = await request(server, 'POST', '/api/v1/session', undefined, {
    token: userToken,
    headers: { 'x-service-csrf': '1' },
  });
  const pair = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('svc_session='))
    ?.split(';')[0];
  if (res.status !== 201 || !pair) throw new Error(`session: ${res.status} ${res.text}`);
  return pair.slice('svc_session='.length);
}

/** A page whose context carries a session cookie of the user of `userToken` (what sign-in sets). */
export async function signedInPage(
  h: Harness,
  userToken: string,
  viewport = { width: 1280, height: 800 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await h.browser.newContext({ viewport });
  const session = await openSession(h.server, userToken);
  await context.addCookies([
    { name: 'svc_session', value: session, url: h.server.url, httpOnly: true, sameSite: 'Strict' },
  ]);
  // A loaded machine, to make races between the page and the test's steps show up:
  // SHELL_LATE_FRAMES=<ms> holds every animation frame's callbacks back by that long, and
  // SHELL_CPU_THROTTLE=<rate> slows the page's CPU that many times (waits grow with it).
  const late = Number(process.env.SHELL_LATE_FRAMES ?? 0);
  if (late > 0)
    await context.addInitScript(`{
      const frame = window.requestAnimationFrame.bind(window);
      window.requestAnimationFrame = (cb) => frame(() => setTimeout(() => frame(cb), ${late}));
    }`);
  const page = await context.newPage();
  const throttle = Math.max(1, Number(process.env.SHELL_CPU_THROTTLE ?? 1) || 1);
  if (throttle > 1)
    await (await context.newCDPSession(page)).send('Emulation.setCPUThrottlingRate', { rate: throttle });
  page.setDefaultTimeout(10_000 * throttle);
  return { context, page };
}

export const shot = (h: Harness, page: Page, name: string) =>
  page.screenshot({ path: path.join(h.shots, `${name}.png`), fullPage: true });
