// Explore and sources in a real browser: keys with their event counts, a key's paths, chart,
// table and CSV download, "add to a dashboard"; minting a source token (shown once, with curl
// lines) that works against the API, and revoking it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('explore and sources', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  test('explore: keys with counts, paths, chart, table, CSV, add to a dashboard', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/explore?range=7d&g=1h`);
    const keys = page.getByRole('region', { name: 'Keys' });
    const sk = keys.getByRole('button', { name: /shop::SK::orders/ });
    await sk.waitFor();
    assert.equal(
      (await sk.textContent())!.replace('shop::SK::orders', ''),
      '48',
      'one event per point written',
    );
    assert.equal(await page.getByTestId('total-events').textContent(), '96 events');
    await sk.click();
    await page.waitForURL(/key=shop%3A%3ASK%3A%3Aorders/);
    await page.getByRole('button', { name: 'country.SK' }).click();
    await page.waitForURL(/path=country.SK/);
    await page.locator('[data-widget-id="explore"][data-widget-type="timeseries"]').waitFor();
    const values = page.getByRole('region', { name: 'Values' });
    await values.locator('tbody tr').first().waitFor();
    const cells = await values.locator('tbody td.num').allTextContents();
    assert.equal(cells.filter((c) => c === '2').length, 48);
    await shot(h, page, 'explore');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'shop_SK_orders.csv');
    const csv = await readFile((await download.path())!, 'utf8');
    assert.equal(csv.split('\n')[0], 'at,count,country.CZ,country.SK,revenue');

    // Dashboards of this key (or whose segmented key matches it) take the path as a new time chart.
    const made = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      { name: 'SK only', key: 'shop::SK::orders', source: { type: 'project', id: seeded.sourceId } },
      { token: seeded.userToken },
    );
    await page.reload();
    await page.getByRole('button', { name: 'Add to dashboard' }).waitFor();
    const choice = page.locator('select[name=dashboard]');
    assert.deepEqual(await choice.locator('option').allTextContents(), ['Orders', 'SK only']);
    await choice.selectOption({ label: 'SK only' });
    const exploreRange = new URL(page.url()).searchParams.get('range');
    await page.getByRole('button', { name: 'Add to dashboard' }).click();
    await page.waitForURL((url) => url.pathname === `/d/${made.body.data.id}`);
    // The dashboard opens on the range Explore showed.
    assert.equal(new URL(page.url()).searchParams.get('range'), exploreRange);
    await page.locator('[data-widget-type="timeseries"]').waitFor();
    const saved = await request(h.server, 'GET', `/api/v1/dashboards/${made.body.data.id}`, undefined, {
      token: seeded.userToken,
    });
    assert.deepEqual(saved.body.data.payload.grid[0].paths, ['country.SK']);
    await page.goBack();
    await page.getByRole('button', { name: 'Add to dashboard' }).click();
    await page.waitForURL(`**/d/${seeded.dashboardId}?range=7d&g=1h&s.country=SK`);
    const orders = await request(h.server, 'GET', `/api/v1/dashboards/${seeded.dashboardId}`, undefined, {
      token: seeded.userToken,
    });
    assert.deepEqual(
      orders.body.data.payload.grid.at(-1).paths,
      ['country.SK'],
      'opened on the segment value of the key',
    );
    await context.close();
  });

  test('sources: mint a token shown once with curl lines, use it, revoke it', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.server.url });
    await page.goto(`${h.server.url}/sources`);
    const panel = page.locator('section[data-source="Web shop"]');
    await panel.getByText('CLI source token').waitFor();
    await panel.getByPlaceholder('Token name').fill('grafana reader');
    await panel.getByLabel('write').uncheck();
    await panel.getByRole('button', { name: 'Mint token' }).click();
    const value = (await page.getByTestId('token-value').textContent())!;
    assert.match(value, /^svc_sat_[A-Za-z0-9_-]{43}$/);
    const curl = (await page.getByTestId('curl-lines').textContent())!;
    assert.ok(
      curl.includes(`Authorization: Bearer ${value}`) &&
        curl.includes(`X-Service-Source-Id: ${seeded.sourceId}`),
    );
    assert.match(curl, /curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/metrics /);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), value);
    await shot(h, page, 'sources-minted');

    const read = () =>
      request(
        h.server,
        'GET',
        '/api/v1/metrics?key=shop::SK::orders&from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z&granularity=1h',
        undefined,
        { token: value, sourceId: seeded.sourceId },
      );
    assert.equal((await read()).status, 200);
    const write = await request(
      h.server,
      'POST',
      '/api/v1/metrics',
      { key: 'k', at: '2026-01-01T00:00:00Z', values: { a: 1 } },
      { token: value, sourceId: seeded.sourceId },
    );
    assert.equal(write.status, 403, 'minted without write');

    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByTestId('token-value').count(), 0, 'shown once');
    const row = panel.locator('li[data-token="grafana reader"]');
    await row.getByText(`…${value.slice(-5)} · read`).waitFor();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke grafana reader' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await read()).status, 401);

    await page.getByRole('form', { name: 'New project' }).getByLabel('Name').fill('Second');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.locator('section[data-source="Second"]').waitFor();
    await context.close();
  });
});

describe('share links', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  test('a link opens the dashboard read-only without signing in, in kiosk mode, until revoked', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.server.url });
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.getByRole('button', { name: 'Share' }).click();
    await page.getByRole('button', { name: 'Create link' }).click();
    const url = (await page.getByTestId('share-url').textContent())!;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/s\/[A-Za-z0-9_-]{43}\?kiosk$/);

    const visitor = await h.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const wall = await visitor.newPage();
    await wall.goto(url);
    await wall.locator('[data-widget-id="revenue"]:not([data-state="loading"])').waitFor();
    assert.equal(await wall.locator('[data-widget-id]').count(), 3);
    assert.equal(await wall.locator('header.topbar').count(), 0);
    await wall.goto(url.replace('?kiosk', '?s.country=CZ'));
    await wall.getByTestId('dashboard-key').getByText('shop::CZ::orders').waitFor();
    assert.equal(await wall.getByRole('button', { name: 'Edit', exact: true }).count(), 0);
    assert.equal(await wall.getByRole('button', { name: 'Share' }).count(), 0);
    await wall.getByRole('button', { name: '7d' }).click();
    await wall.waitForURL(/\/s\/.+range=7d/);
    await wall.locator('[data-widget-id="revenue"][data-state="ready"]').waitFor();
    await shot(h, wall, 'shared');

    const last5 = url.replace('?kiosk', '').slice(-5);
    await page.locator(`li[data-share="${last5}"]`).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('button', { name: `Revoke link …${last5}` }).click();
    await page.locator(`li[data-share="${last5}"]`).waitFor({ state: 'detached' });
    await wall.reload();
    await wall.getByText('This link does not exist or was revoked.').waitFor();
    await visitor.close();
    await context.close();
  });
});
