// Editing in a real browser: the dashboards list (groups, rename, reorder, duplicate, delete,
// search), a widget edited through its form and saved, and the JSON editor showing a 422 at its field.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('editing', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  const dashboards = async () =>
    (await request(h.server, 'GET', '/api/v1/dashboards', undefined, { token: seeded.userToken })).body
      .data as { name: string; group_id: string | null; id: string }[];

  test('dashboards and groups: create, rename, move to a group, reorder, duplicate, delete, search', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(h.server.url);
    const newDashboard = page.getByRole('form', { name: 'New dashboard' });
    await newDashboard.getByLabel('Name').fill('Visits');
    await newDashboard.getByLabel('Metric key').fill('shop::visits');
    await newDashboard.getByRole('button', { name: 'Create dashboard' }).click();
    await page.waitForURL(/\/d\//);
    await page.getByRole('heading', { name: 'Visits' }).waitFor();
    await page.goBack();

    await page.getByRole('form', { name: 'New group' }).getByLabel('Group name').fill('Team');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.locator('section[data-group="Team"]').waitFor();
    await page.getByRole('button', { name: 'Rename Team' }).click();
    await page.getByLabel('Group name', { exact: true }).first().fill('Sales');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('section[data-group="Sales"]').waitFor();

    await page.getByLabel('Group of Visits').selectOption({ label: 'Sales' });
    await page.locator('section[data-group="Sales"] li[data-dashboard="Visits"]').waitFor();
    const groups = (
      await request(h.server, 'GET', '/api/v1/dashboard-groups', undefined, { token: seeded.userToken })
    ).body.data;
    assert.equal((await dashboards()).find((d) => d.name === 'Visits')!.group_id, groups[0].id);

    await page.getByRole('button', { name: 'Rename Orders' }).click();
    await page.getByLabel('Dashboard name').fill('Shop orders');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('li[data-dashboard="Shop orders"]').waitFor();
    await page.locator('li[data-dashboard="Shop orders"]').getByRole('button', { name: 'Duplicate' }).click();
    await page.locator('li[data-dashboard="Shop orders (copy)"]').waitFor();
    await page.getByRole('button', { name: 'Move Shop orders (copy) up' }).click();
    await page.waitForFunction(
      () =>
        (globalThis as any).document
          .querySelector('section[data-group=""] li')
          ?.getAttribute('data-dashboard') === 'Shop orders (copy)',
    );
    assert.deepEqual(
      (await dashboards()).map((d) => d.name),
      ['Visits', 'Shop orders (copy)', 'Shop orders'].sort((a, b) =>
        a === 'Visits' ? -1 : b === 'Visits' ? 1 : 0,
      ),
    );

    await page.getByPlaceholder('Search by name or key').fill('copy');
    await page.waitForURL(/q=copy/);
    assert.equal(await page.locator('li[data-dashboard]').count(), 1);
    await page.getByPlaceholder('Search by name or key').fill('');
    await page
      .locator('li[data-dashboard="Shop orders (copy)"]')
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('button', { name: 'Delete Shop orders (copy)' }).click();
    await page.locator('li[data-dashboard="Shop orders (copy)"]').waitFor({ state: 'detached' });
    await shot(h, page, 'dashboards-list');

    await page.getByRole('button', { name: 'Move group Sales down' }).waitFor();
    await page.getByRole('button', { name: 'Delete group' }).click();
    await page.getByRole('button', { name: 'Delete group (dashboards stay)' }).click();
    await page.locator('section[data-group="Sales"]').waitFor({ state: 'detached' });
    assert.equal((await dashboards()).find((d) => d.name === 'Visits')!.group_id, null);
    await context.close();
  });

  test('a widget edited through its form and saved; added, moved and removed', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.locator('[data-widget-id="orders"]:not([data-state="loading"])').waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit Orders' }).click();
    const form = page.getByRole('form', { name: 'Widget' });
    await form.getByLabel('Title').fill('Orders placed');
    await form.getByLabel('Function').selectOption('max');
    const suggestions = await form
      .locator('datalist option')
      .evaluateAll((options) => options.map((o) => o.getAttribute('value')));
    assert.deepEqual(suggestions, ['count', 'country.CZ', 'country.SK', 'revenue'], 'paths seen in the data');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Wider Orders placed' }).click();
    await page.getByRole('button', { name: 'Move By country right' }).click();
    await page.getByRole('button', { name: 'Remove Revenue' }).click();

    // A widget the server refuses: the 422 names it, and its form opens from the message.
    await page.getByLabel('Widget type').selectOption('list');
    await page.getByRole('button', { name: 'Add widget' }).click();
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const refused = page.locator('[data-field^="payload.grid[list-3]"]').first();
    await refused.waitFor();
    await refused.click();
    await form.getByLabel('Path (ending in .*)').fill('country.*');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Remove list-3' }).click();
    assert.equal(
      await page.locator('[data-field^="payload.grid[list-3]"]').count(),
      0,
      'its errors go with it',
    );

    await page.getByLabel('Widget type').selectOption('table');
    await page.getByRole('button', { name: 'Add widget' }).click();
    await form.getByLabel('Title').fill('All values');
    await form.getByLabel('Path 1', { exact: true }).fill('count');
    await form.getByRole('button', { name: 'Add path' }).click();
    await form.getByLabel('Path 2', { exact: true }).fill('revenue');
    await form.getByRole('button', { name: 'Apply' }).click();
    await shot(h, page, 'editor');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();

    const saved = (
      await request(h.server, 'GET', `/api/v1/dashboards/${seeded.dashboardId}`, undefined, {
        token: seeded.userToken,
      })
    ).body.data;
    const grid = saved.payload.grid as Record<string, unknown>[];
    assert.deepEqual(
      grid.map((w) => w.id),
      ['orders', 'countries', 'table-3'],
    );
    assert.equal(grid[0]!.title, 'Orders placed');
    assert.equal(grid[0]!.function, 'max');
    assert.equal(grid[0]!.w, 4);
    assert.equal(grid[1]!.x, 1);
    assert.deepEqual(grid[2]!.paths, ['count', 'revenue']);
    assert.deepEqual([grid[2]!.x, grid[2]!.y], [4, 0], 'a new widget goes to the first free space');
    await page.locator('[data-widget-id="table-3"]').waitFor();
    await context.close();
  });

  test('a widget of series rows: the form shows its rows, and saving a new title keeps them', async () => {
    const series = [
      { kind: 'path', path: 'revenue', visible: false, color: '#123456' },
      { kind: 'path', path: 'count', visible: false },
      { kind: 'expression', expression: 'a / b', label: 'Revenue per order' },
    ];
    const created = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      {
        name: 'Ratios',
        key: 'shop::SK::orders',
        source: { type: 'project', id: seeded.sourceId },
        payload: {
          grid: [
            { id: 'ratio', type: 'timeseries', title: 'Per order', series, x: 0, y: 0, w: 6, h: 3 },
            {
              id: 'plain',
              type: 'table',
              title: 'Plain',
              paths: ['revenue', 'count'],
              x: 6,
              y: 0,
              w: 6,
              h: 3,
            },
          ],
        },
      },
      { token: seeded.userToken },
    );
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id as string;
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${id}`);
    await page.locator('[data-widget-id="ratio"][data-state="ready"]').waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit Per order' }).click();
    const form = page.getByRole('form', { name: 'Widget' });
    assert.equal(await form.getByLabel('Row 1 path').inputValue(), 'revenue');
    assert.equal(await form.getByLabel('Row 3 expression').inputValue(), 'a / b');
    assert.equal(await form.getByLabel('Row 3 label').inputValue(), 'Revenue per order');
    assert.equal(
      await form.getByLabel('Path 1', { exact: true }).count(),
      0,
      'no empty Paths field beside the rows',
    );
    await form.getByLabel('Title').fill('Revenue per order');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    const saved = (
      await request(h.server, 'GET', `/api/v1/dashboards/${id}`, undefined, { token: seeded.userToken })
    ).body.data;
    const widget = saved.payload.grid[0] as Record<string, unknown>;
    assert.equal(widget.title, 'Revenue per order');
    assert.deepEqual(widget.series, series, 'the rows, their order and their other fields are kept');
    assert.equal(widget.paths, undefined);

    // Rows edited through the form: a label added, a row hidden, a row added.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit Revenue per order' }).click();
    await form.getByLabel('Row 1 label').fill('Revenue');
    await form.getByRole('button', { name: 'Add path row' }).click();
    await form.getByLabel('Row 4 path').fill('count');
    await form.getByRole('button', { name: 'Add expression row' }).click();
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    const again = (
      await request(h.server, 'GET', `/api/v1/dashboards/${id}`, undefined, { token: seeded.userToken })
    ).body.data;
    assert.deepEqual(
      again.payload.grid[0].series,
      [
        { ...series[0], label: 'Revenue' },
        series[1],
        series[2],
        { kind: 'path', path: 'count', visible: true },
      ],
      'the empty new row is dropped',
    );

    // A widget of paths turned into series rows through the form, to add an expression.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit Plain' }).click();
    await form.getByRole('button', { name: 'Use series rows' }).click();
    assert.equal(await form.getByLabel('Row 2 path').inputValue(), 'count');
    await form.getByRole('button', { name: 'Add expression row' }).click();
    await form.getByLabel('Row 3 expression').fill('a / b');
    await form.getByLabel('Row 3 label').fill('Per order');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    const plain = (
      await request(h.server, 'GET', `/api/v1/dashboards/${id}`, undefined, { token: seeded.userToken })
    ).body.data.payload.grid[1];
    assert.deepEqual(plain.series, [
      { kind: 'path', path: 'revenue', visible: true },
      { kind: 'path', path: 'count', visible: true },
      { kind: 'expression', expression: 'a / b', visible: true, label: 'Per order' },
    ]);
    assert.equal(plain.paths, undefined);
    await page
      .locator('[data-widget-id="plain"][data-state="ready"] tbody th', { hasText: 'Per order' })
      .waitFor();
    await context.close();
  });

  test('the JSON editor shows the server’s 422 at its field; a locked dashboard has no edit controls', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit JSON' }).click();
    const editor = page.getByLabel('Dashboard JSON');
    const text = await editor.inputValue();
    await editor.fill(text.replace('"path": "count"', '"path": "bad path*"'));
    await page.getByRole('button', { name: 'Save JSON' }).click();
    const error = page.locator('[data-field="payload.grid[orders].path"]');
    await error.waitFor();
    assert.match(
      (await error.textContent())!,
      /^Line \d+ · payload\.grid\[orders\]\.path: must be a dot path/,
    );
    const selected = await editor.evaluate((el) => {
      const area = el as unknown as { value: string; selectionStart: number; selectionEnd: number };
      return area.value.slice(area.selectionStart, area.selectionEnd).trim();
    });
    assert.equal(selected, '"path": "bad path*",', 'the field’s line is selected');
    assert.equal(await editor.getAttribute('aria-invalid'), 'true');
    await shot(h, page, 'json-422');

    // The dashboard's own fields: a 422 under its field, then a good save keeps the editor open.
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Settings' }).click();
    const settings = page.getByRole('form', { name: 'Dashboard settings' });
    await settings.getByLabel('Default range').fill('soon');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.locator('[data-error-for="default_timeframe"]').waitFor();
    await settings.getByLabel('Default range').fill('7d');
    await settings.getByLabel('Name', { exact: true }).fill('Orders overview');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('heading', { name: 'Editing Orders overview' }).waitFor();
    const renamed = await request(h.server, 'GET', `/api/v1/dashboards/${seeded.dashboardId}`, undefined, {
      token: seeded.userToken,
    });
    assert.equal(renamed.body.data.default_timeframe, '7d');

    const lock = await request(
      h.server,
      'PUT',
      `/api/v1/dashboards/${seeded.dashboardId}`,
      { locked: true },
      { token: seeded.userToken },
    );
    assert.equal(lock.status, 200);
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.getByText('locked', { exact: true }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Edit', exact: true }).count(), 0);
    await context.close();
  });
});
