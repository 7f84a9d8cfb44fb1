// A dashboard's first series read leaves while the page is still loading (SPEC 10: within 150 ms of
// navigation): a signed-in browser's /d/<id> carries the dashboard and its source in a JSON data
// block, and the inline script (web/boot.ts) starts the series read from it before the interface's
// module has arrived; the page then takes that answer instead of reading again. The page's
// Content-Security-Policy allows that one inline script by its hash and no other.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { openSession, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

const SERIES = /^\/api\/v1\/sources\/[^/]+\/metrics$/;
const HOSTILE_NAME = 'Orders </script><script>globalThis.__injected = 1</script><!-- & more';

describe('a dashboard page’s first read', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  let id = '';
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));
  before(async () => {
    // no segments: its series read needs nothing the page asks the user
    const res = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      {
        name: HOSTILE_NAME,
        key: 'shop::SK::orders',
        source: { type: 'project', id: seeded.sourceId },
        default_timeframe: '24h',
        default_granularity: '1h',
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
            {
              id: 'revenue',
              type: 'timeseries',
              title: 'Revenue',
              paths: ['revenue'],
              x: 3,
              y: 0,
              w: 9,
              h: 3,
            },
          ],
        },
      },
      { token: seeded.userToken },
    );
    assert.equal(res.status, 201, res.text);
    id = res.body.data.id;
  });

  test('the series read leaves before the interface’s module arrives, and is the only one', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    const sent: string[] = [];
    let seriesSent!: () => void;
    const series = new Promise<void>((resolve) => (seriesSent = resolve));
    page.on('request', (r) => {
      const p = new URL(r.url()).pathname;
      sent.push(p);
      if (SERIES.test(p)) seriesSent();
    });
    // The interface's module is held back until a series read has left (5 s at most): only the
    // page's inline script can have sent it.
    let heldUntilSeries = false;
    await page.route('**/assets/app.*.js', async (route) => {
      heldUntilSeries = await Promise.race([
        series.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
      ]);
      await route.continue();
    });
    await page.goto(`${h.server.url}/d/${id}`);
    await page.locator('[data-widget-id="orders"][data-state="ready"]').waitFor();
    await page.locator('[data-widget-id="revenue"][data-state="ready"]').waitFor();
    assert.ok(heldUntilSeries, `no series read before the module ran; requests: ${sent.join(' ')}`);
    const first = sent.findIndex((p) => SERIES.test(p));
    assert.deepEqual(
      sent.slice(0, first).filter((p) => p.startsWith('/api/')),
      [],
      'the dashboard and its source came with the page',
    );
    assert.equal(sent.filter((p) => SERIES.test(p)).length, 1, 'the page took the read already made');
    assert.equal(await page.locator('h1').first().innerText(), HOSTILE_NAME);
    assert.equal(await page.evaluate('globalThis.__injected'), undefined);
    await context.close();
  });

  test('the page holds no token, and its data cannot end its element', async () => {
    const session = await openSession(h.server, seeded.userToken);
    const res = await fetch(`${h.server.url}/d/${id}`, { headers: { cookie: `svc_session=${session}` } });
    const html = await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'private, no-cache');
    const blocks = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.deepEqual(
      blocks.map((b) => b[1]),
      [
        ' type="application/json" id="svc-page-data"',
        '',
        ` type="module" src="${/src="([^"]+)"/.exec(html)![1]}"`,
      ],
    );
    const data = JSON.parse(blocks[0]![2]!);
    assert.equal(data.dashboard.id, id);
    assert.equal(data.dashboard.data.name, HOSTILE_NAME);
    assert.equal(data.dashboard.source.id, seeded.sourceId);
    for (const secret of [session, seeded.userToken, seeded.sourceToken])
      assert.ok(!html.includes(secret), 'no credential in the page');
  });

  test('the policy runs the page’s own inline script only: an injected one is refused', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${id}`);
    await page.locator('[data-widget-id="orders"][data-state="ready"]').waitFor();
    const outcome = await page.evaluate(`new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true });
      const s = document.createElement('script');
      s.textContent = 'globalThis.__injected = 2';
      document.head.append(s);
      setTimeout(() => resolve(globalThis.__injected === 2 ? 'ran' : 'no event'), 2000);
    })`);
    assert.equal(outcome, 'script-src-elem');
    assert.equal(await page.evaluate('globalThis.__injected'), undefined);
    await context.close();
  });
});
