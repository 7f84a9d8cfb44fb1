// The Sources page edits and deletes sources: the settings form (zone editable only while a project
// holds no data, errors next to their fields), and a deletion that names what goes with it.
// SOURCE_SETTINGS_SHOT=1 writes docs/screenshots/source-settings.png.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { seriousViolations } from './axe-check';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('source settings', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  const sources = async () =>
    (await request(h.server, 'GET', '/api/v1/bootstrap/sources', undefined, { token: seeded.userToken })).body
      .data.projects as Array<{
      id: string;
      display_name: string;
      time_zone: string;
      granularities: string[];
    }>;

  test('a project with data is renamed, its zone is fixed; a bad granularity shows at its field', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/sources`);
    const panel = page.locator('section[data-source="Web shop"]');
    await panel.getByText('Settings', { exact: true }).click();
    const form = panel.getByRole('form', { name: 'Settings of Web shop' });
    await form.waitFor();
    await form.getByText('Fixed: the project holds data').waitFor();
    assert.equal(await form.getByLabel('Time zone').isDisabled(), true);
    await panel.getByRole('button', { name: 'Delete source…' }).click();
    await panel.getByTestId('delete-dependents').waitFor();
    // The open settings and the confirmation pass axe in both themes.
    for (const theme of ['light', 'dark']) {
      await page.evaluate(`document.documentElement.dataset.theme = '${theme}'`);
      assert.deepEqual(await seriousViolations(page), [], theme);
    }
    await page.evaluate(`document.documentElement.dataset.theme = 'light'`);
    if (process.env.SOURCE_SETTINGS_SHOT) {
      // Tall enough that the panel needs no scrolling under the sticky header.
      await page.setViewportSize({ width: 1280, height: 1600 });
      await page.evaluate('window.scrollTo(0, 0)');
      await panel.screenshot({
        path: path.join(import.meta.dirname, '..', '..', 'docs', 'screenshots', 'source-settings.png'),
      });
    }
    await panel.getByRole('button', { name: 'Cancel' }).click();
    await page.setViewportSize({ width: 1280, height: 800 });

    await form.getByLabel('Granularities').fill('1h,nonsense');
    await form.getByRole('button', { name: 'Save settings' }).click();
    const error = form.locator('[data-error-for$="granularities-error"]');
    await error.waitFor();
    assert.match(await error.innerText(), /invalid granularity/);
    assert.equal(await form.getByLabel('Granularities').getAttribute('aria-invalid'), 'true');

    await form.getByLabel('Granularities').fill('1m,1h,1d,1w');
    await form.getByLabel('Name').fill('Web shop EU');
    await form.getByLabel('Keep data for (days, empty: forever)').fill('90');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('section[data-source="Web shop EU"]').waitFor();
    const made = (await sources()).find((s) => s.id === seeded.sourceId)!;
    assert.equal(made.display_name, 'Web shop EU');
    assert.equal(made.time_zone, 'Europe/Bratislava');
    await shot(h, page, 'source-settings');
    await context.close();
  });

  test('a new project takes a zone from the list while empty; deleting it names what goes and removes it', async () => {
    const created = await request(
      h.server,
      'POST',
      '/api/v1/bootstrap/projects',
      { name: 'Scratch', time_zone: 'UTC' },
      { token: seeded.userToken },
    );
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.source.id as string;
    const dash = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      { name: 'Scratch board', key: 'x', source: { type: 'project', id } },
      { token: seeded.userToken },
    );
    assert.equal(dash.status, 201, dash.text);

    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/sources`);
    const panel = page.locator('section[data-source="Scratch"]');
    await panel.getByText('Settings', { exact: true }).click();
    const form = panel.getByRole('form', { name: 'Settings of Scratch' });
    await form.getByText('Can change until the first point').waitFor();
    const zone = form.getByLabel('Time zone');
    assert.equal(await zone.isDisabled(), false);
    assert.ok(await page.evaluate(() => (Intl as any).supportedValuesOf('timeZone').includes('Asia/Tokyo')));
    assert.equal(await zone.getAttribute('list'), await form.locator('datalist').getAttribute('id'));
    await zone.fill('Asia/Tokyo');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    assert.equal((await sources()).find((s) => s.id === id)!.time_zone, 'Asia/Tokyo');

    await panel.getByRole('button', { name: 'Delete source…' }).click();
    const list = panel.getByTestId('delete-dependents');
    await list.waitFor();
    const text = await list.innerText();
    assert.match(text, /0 metric keys/);
    assert.match(text, /0 source tokens/);
    assert.match(text, /1 dashboard: Scratch board/);
    assert.match(text, /0 transponders/);
    await panel.getByRole('button', { name: 'Delete project' }).click();
    await panel.waitFor({ state: 'detached' });
    assert.equal(
      (await sources()).find((s) => s.id === id),
      undefined,
    );
    const gone = await request(h.server, 'GET', `/api/v1/dashboards/${dash.body.data.id}`, undefined, {
      token: seeded.userToken,
    });
    assert.equal(gone.status, 404);
    await context.close();
  });
});
