// Grid editing in a real browser (issue 24, M4 and point 2): drag a widget by its handle onto
// others and they move down, drag a corner to resize, duplicate, add a widget into the first free
// space, the widget form's live preview; the saved grid never has an overlap.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { request } from '../helpers/server';
import { hasOverlap } from '../../web/lib/grid-layout';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';
import { waitForWidgets } from './demo-pages';

interface Cell {
  id: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

describe('grid editing by dragging', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  async function createDashboard(): Promise<string> {
    const kpi = (id: string, title: string, x: number, y: number, w: number, h: number) => ({
      id,
      type: 'kpi',
      title,
      path: 'count',
      function: 'sum',
      x,
      y,
      w,
      h,
    });
    const res = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      {
        name: 'Layout',
        key: 'shop::SK::orders',
        source: { type: 'project', id: seeded.sourceId },
        default_timeframe: '24h',
        default_granularity: '1h',
        payload: {
          grid: [kpi('a', 'Alpha', 0, 0, 6, 2), kpi('b', 'Beta', 6, 0, 6, 2), kpi('c', 'Gamma', 0, 2, 12, 2)],
        },
      },
      { token: seeded.userToken },
    );
    assert.equal(res.status, 201, res.text);
    return res.body.data.id;
  }

  async function saved(id: string): Promise<Record<string, Cell>> {
    const res = await request(h.server, 'GET', `/api/v1/dashboards/${id}`, undefined, {
      token: seeded.userToken,
    });
    const grid = res.body.data.payload.grid as Cell[];
    assert.equal(hasOverlap(grid), false, `saved grid overlaps: ${JSON.stringify(grid)}`);
    return Object.fromEntries(grid.map((c) => [c.id, c]));
  }

  async function drag(page: Page, selector: string, dx: number, dy: number) {
    const box = (await page.locator(selector).boundingBox())!;
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    await page.mouse.move(x, y);
    await page.mouse.down();
    for (let i = 1; i <= 8; i++) await page.mouse.move(x + (dx * i) / 8, y + (dy * i) / 8);
    await page.mouse.up();
  }

  test('move, resize, duplicate and add without overlaps; the form previews the widget', async () => {
    const id = await createDashboard();
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${id}`);
    await waitForWidgets(page, 3);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Add widget' }).waitFor();
    const grid = (await page.getByTestId('grid').boundingBox())!;
    const rowPitch = await page
      .getByTestId('grid')
      .evaluate(
        (el: any) =>
          parseFloat((globalThis as any).getComputedStyle(el).gridAutoRows) +
          parseFloat((globalThis as any).getComputedStyle(el).rowGap),
      );

    // Gamma dragged up two rows lands on top; Alpha and Beta move down under it.
    await drag(page, '[data-cell="c"] [data-testid="drag-handle"]', 0, -2 * rowPitch);
    await shot(h, page, 'grid-dragged');
    // Alpha's corner dragged right by two columns: Beta cannot stay beside it and goes below.
    await drag(page, '[data-cell="a"] [data-testid="resize-handle"]', (2 * grid.width) / 12, 0);
    await page.getByRole('button', { name: 'Duplicate Beta' }).click();
    await page.getByLabel('Widget type').selectOption('kpi');
    await page.getByRole('button', { name: 'Add widget' }).click();
    const form = page.getByRole('form', { name: 'Widget' });
    await form.getByLabel('Path', { exact: true }).fill('count');
    await form.getByLabel('Title').fill('Preview me');
    await form.getByRole('group', { name: 'Preview' }).getByText('Preview me').waitFor();
    await shot(h, page, 'grid-preview');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();

    const cells = await saved(id);
    assert.deepEqual([cells.c!.x, cells.c!.y, cells.c!.w], [0, 0, 12], JSON.stringify(cells));
    assert.deepEqual([cells.a!.x, cells.a!.y, cells.a!.w], [0, 2, 8], JSON.stringify(cells));
    assert.equal(cells.b!.y, 4, 'Beta pushed below the wider Alpha');
    const ids = Object.keys(cells);
    assert.equal(ids.length, 5, `duplicate and new widget saved: ${ids.join(', ')}`);
    const added = Object.values(cells).find((c) => (c as any).title === 'Preview me')!;
    // The first free space: beside Alpha (columns 8..11 are free on rows 2..3) for a 3-wide kpi.
    assert.deepEqual([added.x, added.y], [8, 2], JSON.stringify(cells));
    await shot(h, page, 'grid-saved');

    // Keyboard equivalents go through the same layout: moving Gamma down swaps it below Alpha.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: '↓ Move Gamma down' }).click();
    await page.getByRole('button', { name: '↓ Move Gamma down' }).click();
    await page.getByRole('button', { name: '↓ Move Gamma down' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    const after = await saved(id);
    assert.ok(after.c!.y > 0, `Gamma moved down: ${JSON.stringify(after)}`);
    await context.close();
  });

  // The cells stay usable while a widget's form is open: a widget removed before it in the grid
  // shifts the indices, and Apply still changes the widget the form was opened for, no other one.
  test('a widget removed while another one’s form is open: Apply changes the right widget', async () => {
    const id = await createDashboard();
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${id}`);
    await waitForWidgets(page, 3);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit Beta' }).click();
    const form = page.getByRole('form', { name: 'Widget' });
    await form.getByLabel('Title').fill('Beta edited');
    await page.getByRole('button', { name: 'Remove Alpha' }).click();
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Remove Beta edited' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Remove Gamma' }).count(), 1, 'Gamma is kept');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    const cells = await saved(id);
    assert.deepEqual(Object.keys(cells).sort(), ['b', 'c']);
    assert.equal((cells.b as unknown as { title: string }).title, 'Beta edited');
    assert.equal((cells.c as unknown as { title: string }).title, 'Gamma');
    await context.close();
  });
});
