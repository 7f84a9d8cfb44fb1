// Smaller interface faults, each checked in a real browser: the project form keeps its time zone
// after a failed submit; table numbers never sit half under the sticky path column; a split kpi
// can be lower-is-better (and goal_invert is in the form); the custom range's Apply fits a phone.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('interface fixes', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  const dashboard = async (name: string, grid: unknown[]) => {
    const res = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      {
        name,
        key: 'shop::SK::orders',
        source: { type: 'project', id: seeded.sourceId },
        default_timeframe: '24h',
        default_granularity: '1h',
        payload: { grid },
      },
      { token: seeded.userToken },
    );
    assert.equal(res.status, 201, res.text);
    return res.body.data.id as string;
  };

  test('M3: the time zone typed stays after a failed "New project" submit', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/sources`);
    const form = page.getByRole('form', { name: 'New project' });
    await form.getByLabel('Name').fill('Zoned');
    await form.getByLabel('Time zone').fill('America/New_York');
    await form.getByLabel('Granularities').fill('nonsense');
    await form.getByRole('button', { name: 'Create project' }).click();
    await form.getByRole('alert').waitFor();
    assert.equal(await form.getByLabel('Time zone').inputValue(), 'America/New_York');
    await form.getByLabel('Granularities').fill('');
    await form.getByRole('button', { name: 'Create project' }).click();
    await page.locator('section[data-source="Zoned"]').waitFor();
    const sources = await request(h.server, 'GET', '/api/v1/bootstrap/sources', undefined, {
      token: seeded.userToken,
    });
    const made = (sources.body.data.projects as { display_name: string; time_zone: string }[]).find(
      (p) => p.display_name === 'Zoned',
    );
    assert.equal(made?.time_zone, 'America/New_York', 'the project is created in the zone typed');
    await context.close();
  });

  test('M6: no table number is partly hidden under the sticky path column', async () => {
    const id = await dashboard('Table', [
      { id: 't', type: 'table', title: 'Table', paths: ['revenue', 'count'], x: 0, y: 0, w: 5, h: 3 },
    ]);
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${id}`);
    await page.locator('[data-widget-id="t"][data-state="ready"]').waitFor();
    await page.waitForTimeout(200);
    const cut = await page.locator('[data-widget-id="t"] .table-scroll').evaluate((scroller) => {
      const box = scroller.getBoundingClientRect();
      const sticky = scroller.querySelector('tbody .data-table__path')!.getBoundingClientRect();
      const cells = [...scroller.querySelectorAll('tbody tr:first-child td:not(.data-table__pad)')].map((c) =>
        c.getBoundingClientRect(),
      );
      const partial = cells.filter((c) => c.left < sticky.right - 0.5 && c.right > sticky.right + 0.5);
      const lastCell = cells[cells.length - 1]!;
      return {
        partial: partial.length,
        lastVisible: lastCell.right <= box.right + 0.5,
        shown: cells.filter((c) => c.left >= sticky.right - 0.5 && c.right <= box.right + 0.5).length,
      };
    });
    await shot(h, page, 'table-sticky');
    assert.equal(cut.partial, 0, 'a number half under the path column');
    assert.ok(cut.lastVisible, 'the newest bucket is in view');
    assert.ok(cut.shown >= 2, JSON.stringify(cut));
    await context.close();
  });

  test('M7: a lower-is-better split kpi shows a fall green and a rise red; the form has both options', async () => {
    const kpi = (id: string, extra: Record<string, unknown>, x: number) => ({
      id,
      type: 'kpi',
      title: id,
      path: 'count',
      function: 'sum',
      subtype: 'split',
      x,
      y: 0,
      w: 3,
      h: 2,
      ...extra,
    });
    const id = await dashboard('Split', [kpi('plain', {}, 0), kpi('errors', { lower_is_better: true }, 3)]);
    const stored = await request(h.server, 'GET', `/api/v1/dashboards/${id}`, undefined, {
      token: seeded.userToken,
    });
    assert.equal(stored.body.data.payload.grid[1].lower_is_better, true, 'the server keeps the option');
    const { context, page } = await signedInPage(h, seeded.userToken);
    // 36h: the previous 36h hold only 12 hours of points, so the count rises
    await page.goto(`${h.server.url}/d/${id}?p=36h`);
    const split = (w: string) => page.locator(`[data-widget-id="${w}"] .kpi__split[data-change]`);
    await split('errors').waitFor();
    assert.ok(Number(await split('plain').getAttribute('data-change')) > 0);
    assert.equal(await split('plain').getAttribute('data-verdict'), 'better');
    assert.equal(await split('errors').getAttribute('data-verdict'), 'worse');
    const colour = (w: string) =>
      split(w)
        .locator('.kpi__change')
        .evaluate((el) => (globalThis as any).getComputedStyle(el).color as string);
    assert.notEqual(await colour('plain'), await colour('errors'));
    await shot(h, page, 'kpi-lower-is-better');
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit errors' }).click();
    const form = page.getByRole('form', { name: 'Widget' });
    assert.equal(await form.getByLabel(/Lower is better/).isChecked(), true);
    assert.equal(await form.getByLabel(/Goal met at or below/).isChecked(), false);
    await context.close();
  });

  test('M8: at 390x844 the custom range Apply button is on screen and works', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken, { width: 390, height: 844 });
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.getByRole('button', { name: 'Custom…' }).click();
    const apply = page.getByRole('form', { name: 'Custom range' }).getByRole('button', { name: 'Apply' });
    const box = (await apply.boundingBox())!;
    await shot(h, page, 'custom-range-phone');
    assert.ok(box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
    await apply.click();
    await page.waitForURL(/from=/);
    await context.close();
  });
});
