// Shared by the alerts interface's browser tests: whether the server has the monitors API, waiting
// for the evaluator to bring a monitor to a state, and an axe-core check of a page.
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { request, type TestServer } from '../helpers/server';
import { openSession, type Harness } from './shell-helpers';

const AXE = path.join(import.meta.dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js');

/** Why the alert pages cannot be tested against this server (no monitors API), or false. */
export async function monitorsApiMissing(server: TestServer, token: string): Promise<string | false> {
  const res = await request(server, 'GET', '/api/v1/monitors', undefined, { token });
  return res.status === 404
    ? 'this build has no /api/v1/monitors; the alert pages are tested with it'
    : false;
}

interface Listed {
  name: string;
  state?: string;
  instances?: unknown[];
}

/** Polls GET /monitors until the named monitor is in `state` (with at least `instances`), or fails. */
export async function waitForState(
  server: TestServer,
  token: string,
  name: string,
  state: string,
  instances = 1,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: Listed | undefined;
  for (;;) {
    const res = await request(server, 'GET', '/api/v1/monitors', undefined, { token });
    last = (res.body?.data as Listed[] | undefined)?.find((m) => m.name === name);
    if (last?.state === state && (last.instances?.length ?? 0) >= instances) return;
    if (Date.now() > deadline)
      assert.fail(`${name} did not reach ${state} in ${timeoutMs} ms: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> }>;
}

/** Runs axe-core on the page; fails on any serious or critical violation, naming where. */
export async function expectNoSeriousViolations(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ path: AXE });
  const result = (await page.evaluate(() =>
    (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<unknown> } }).axe.run(
      (globalThis as any).document,
      { resultTypes: ['violations'] },
    ),
  )) as AxeResult;
  const serious = result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join('; ')}`,
    );
  assert.deepEqual(serious, [], `axe on ${what}`);
}

/**
 * A signed-in page whose context lets axe-core's script in: the interface's Content-Security-Policy
 * forbids inline script, which is how page.addScriptTag adds it.
 */
export async function axePage(h: Harness, userToken: string, colorScheme: 'light' | 'dark') {
  const context = await h.browser.newContext({
    viewport: { width: 1280, height: 800 },
    bypassCSP: true,
    colorScheme,
  });
  await context.addCookies([
    {
      name: 'svc_session',
      value: await openSession(h.server, userToken),
      url: h.server.url,
      httpOnly: true,
      sameSite: 'Strict',
    },
  ]);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page };
}

/**
 * Five more days of hourly revenue before the 48 hours seedOrganization writes (a daily wave with a
 * peak each evening), so the previews' 7-day window is full.
 */
export async function seedWeek(server: TestServer, seeded: { sourceId: string; sourceToken: string }) {
  const points = [];
  const now = Date.now();
  for (let i = 48; i < 168; i++) {
    const at = new Date(now - i * HOUR_MS).toISOString();
    const revenue = Math.round(125 + 20 * Math.sin((2 * Math.PI * i) / 24) + (i % 24 === 5 ? 30 : 0));
    points.push({ key: 'shop::SK::orders', at, values: { count: 3 + (i % 5), revenue } });
  }
  const res = await request(
    server,
    'POST',
    '/api/v1/metrics/batch',
    { points },
    { token: seeded.sourceToken, sourceId: seeded.sourceId },
  );
  assert.equal(res.status, 201, res.text);
}

const HOUR_MS = 3_600_000;

/** Waits (2 s at most) until the focused element's text is `text`: focus returns after a dialog closes. */
export async function focusOn(page: Page, text: string): Promise<void> {
  const deadline = Date.now() + 2000;
  let now: string | undefined;
  for (;;) {
    now = await page.evaluate(() => (globalThis as any).document.activeElement?.textContent?.slice(0, 80));
    if (now === text) return;
    if (Date.now() > deadline) assert.fail(`focus is on ${JSON.stringify(now)}, not on ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
