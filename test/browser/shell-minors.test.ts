// Smaller interface faults of issue 24, each in a real browser: the custom range's To before From,
// field errors next to their fields, key suggestions, long keys, share links that keep the range,
// Explore's path filter, the chart's text alternative, no previous-period read without a split kpi,
// and a signed-out landing without a failed request in the console.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('interface minors', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  test('the custom range refuses To before From with a message; 24-hour text inputs', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    const metricReads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes(`/sources/${seeded.sourceId}/metrics`)) metricReads.push(r.url());
    });
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.locator('.ts__plot[role="img"]').first().waitFor();
    // The seeded dashboard has no split kpi: one read, not two.
    assert.equal(metricReads.length, 1, metricReads.join('\n'));
    const label = await page.locator('.ts__plot[role="img"]').first().getAttribute('aria-label');
    assert.match(label!, /Europe\/Bratislava\) by 1h/);
    assert.match(label!, /revenue from \d/);

    await page.getByRole('button', { name: 'Custom…' }).click();
    const form = page.getByRole('form', { name: 'Custom range' });
    assert.match(
      await form.getByLabel('From', { exact: true }).inputValue(),
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/,
    );
    await form.getByLabel('From', { exact: true }).fill('2026-01-25 18:00');
    await form.getByLabel('To', { exact: true }).fill('2026-01-24 10:00');
    const before = page.url();
    await form.getByRole('button', { name: 'Apply' }).click();
    await form.getByRole('alert').filter({ hasText: 'To must be after From' }).waitFor();
    assert.equal(await form.getByLabel('To', { exact: true }).getAttribute('aria-invalid'), 'true');
    assert.equal(page.url(), before);
    await form.getByLabel('To', { exact: true }).fill('2026-01-25 23:30');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/from=2026-01-25T17%3A00%3A00Z&to=2026-01-25T22%3A30%3A00Z/);

    // A share link made now opens on this range.
    await page.getByRole('button', { name: 'Share' }).click();
    await page.getByRole('button', { name: 'Create link' }).click();
    const url = await page.getByTestId('share-url').innerText();
    assert.match(url, /\?kiosk&/);
    assert.match(url, /from=2026-01-25T17%3A00%3A00Z/);
    assert.match(url, /to=2026-01-25T22%3A30%3A00Z/);
    await context.close();
  });

  test('new dashboard: key suggestions, a blank key refused at its field; long keys do not widen the list', async () => {
    const long = `shop::${'x'.repeat(240)}::orders`;
    const made = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      { name: `Long ${'n'.repeat(200)}`, key: long, source: { type: 'project', id: seeded.sourceId } },
      { token: seeded.userToken },
    );
    assert.equal(made.status, 201, made.text);
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/`);
    const form = page.getByRole('form', { name: 'New dashboard' });
    await form.waitFor();
    await page
      .locator('[data-testid="key-suggestions"] option[value="shop::SK::orders"]')
      .waitFor({ state: 'attached' });
    const width = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
          .documentElement.scrollWidth,
    );
    assert.ok(width <= 1280, `page ${width} px wide`);
    await form.getByLabel('Name').fill('Blank');
    await form.getByLabel('Metric key').fill('   ');
    await form.getByRole('button', { name: 'Create dashboard' }).click();
    const error = form.locator('[data-error-for="new-dashboard-key"]');
    await error.waitFor();
    assert.equal(await error.innerText(), 'must not be blank');
    assert.equal(await form.getByLabel('Metric key').getAttribute('aria-invalid'), 'true');
    await shot(h, page, 'new-dashboard-errors');

    await page.goto(`${h.server.url}/d/${made.body.data.id}`);
    await page.locator('h1').waitFor();
    const wide = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
          .documentElement.scrollWidth,
    );
    assert.ok(wide <= 1280, `dashboard page ${wide} px wide`);
    await context.close();
  });

  test('new project: errors at their fields; the zone is a searchable list', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/sources`);
    const form = page.getByRole('form', { name: 'New project' });
    await form.getByLabel('Name').fill('Errors');
    await form.getByLabel('Granularities').fill('1h,bogus');
    await form.getByLabel('Default range').fill('soon');
    await form.getByRole('button', { name: 'Create project' }).click();
    await form.locator('[data-error-for$="-granularities"]').waitFor();
    assert.match(await form.locator('[data-error-for$="-granularities"]').innerText(), /invalid granularity/);
    assert.match(await form.locator('[data-error-for$="-default_timeframe"]').innerText(), /timeframe/);
    const zone = form.getByLabel('Time zone');
    const listId = await zone.getAttribute('list');
    const options = await page.locator(`datalist#${listId} option`).count();
    assert.ok(options > 300, `${options} zones`);
    // Token creation times are local dates, not ISO text.
    const meta = await page.locator('[data-token] time').first().innerText();
    assert.doesNotMatch(meta, /T\d{2}:\d{2}:\d{2}/);
    await context.close();
  });

  test('Explore filters a long path list', async () => {
    const values: Record<string, number> = {};
    for (let i = 0; i < 14; i++) values[`p${i}`] = i + 1;
    const w = await request(
      h.server,
      'POST',
      '/api/v1/metrics',
      { key: 'wide', at: new Date().toISOString(), values },
      { token: seeded.sourceToken, sourceId: seeded.sourceId },
    );
    assert.equal(w.status, 201, w.text);
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/explore?source=${seeded.sourceId}&key=wide`);
    const paths = page.getByRole('region', { name: 'Paths' });
    await paths.getByRole('button', { name: 'p13', exact: true }).waitFor();
    await paths.getByLabel('Filter paths').fill('p1');
    await paths.getByRole('button', { name: 'p2', exact: true }).waitFor({ state: 'detached' });
    assert.equal(await paths.getByRole('button', { name: /^p1\d?$/ }).count(), 5); // p1, p10..p13
    await context.close();
  });

  test('the signed-out landing logs no failed request', async () => {
    const context = await h.browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${h.server.url}/`);
    await page.waitForURL(/\/signin/);
    await page.getByLabel('Password').waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  });
});
