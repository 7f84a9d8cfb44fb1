// A failed refresh keeps the last good data: one 503 while a dashboard is on screen leaves every
// widget drawn and shows one page-level banner saying what failed, when, and when it retries.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

const UNAVAILABLE = {
  status: 503,
  contentType: 'application/json',
  body: JSON.stringify({ errors: { detail: 'The store is unavailable' } }),
};

describe('refresh failures', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  test('a 503 on refresh keeps the widgets drawn, with a banner; Retry brings fresh data', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}?refresh=30s`);
    await page.locator('[data-widget-id="orders"][data-state="ready"]').waitFor();
    await page.locator('[data-widget-id="revenue"][data-state="ready"]').waitFor();
    const kpi = await page.locator('[data-widget-id="orders"]').innerText();

    await page.route('**/api/v1/sources/*/metrics*', (route) => route.fulfill(UNAVAILABLE));
    await page.getByRole('button', { name: 'Refresh now' }).click();
    const banner = page.getByRole('alert', { name: 'Refresh failed' });
    await banner.waitFor();
    const text = await banner.innerText();
    assert.match(text, /Could not refresh the data at \d\d:\d\d:\d\d: The store is unavailable/);
    assert.match(text, /Still showing the data read at \d\d:\d\d:\d\d/);
    assert.match(text, /Next try by \d\d:\d\d:\d\d \(auto-refresh every 30 s\)/);
    await shot(h, page, 'refresh-failed');
    const states = await page
      .locator('[data-widget-id]')
      .evaluateAll((cells) => cells.map((c) => c.getAttribute('data-state')));
    assert.deepEqual(states, ['ready', 'ready', 'ready'], 'the data on screen stays');
    assert.equal(await page.locator('[data-widget-id="orders"]').innerText(), kpi);
    assert.equal(await page.getByText('Could not draw this widget').count(), 0);

    await page.unroute('**/api/v1/sources/*/metrics*');
    await banner.getByRole('button', { name: 'Retry now' }).click();
    await banner.waitFor({ state: 'detached' });
    await context.close();
  });

  test('a first read that fails: each widget says its data could not be read, and why', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.route('**/api/v1/sources/*/metrics*', (route) => route.fulfill(UNAVAILABLE));
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    const orders = page.locator('[data-widget-id="orders"][data-state="error"]');
    await orders.waitFor();
    assert.match(await orders.innerText(), /Could not read the data\s+The store is unavailable/);
    await context.close();
  });
});
