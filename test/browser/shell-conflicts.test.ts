// Editing never loses work: two tabs edit one dashboard; the later Save does not silently wipe the
// earlier tab's saved change but says who saved it and when, and offers Reload or Overwrite.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('editing conflicts', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  const stored = async () =>
    (
      await request(h.server, 'GET', `/api/v1/dashboards/${seeded.dashboardId}`, undefined, {
        token: seeded.userToken,
      })
    ).body.data as {
      payload: { grid: { id: string; title: string }[] };
    };

  test('a later Save from a stale tab is refused; Overwrite and Reload both work', async () => {
    const { context, page: first } = await signedInPage(h, seeded.userToken);
    const second = await context.newPage();
    for (const page of [first, second]) {
      await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
      await page.locator('[data-widget-id="orders"]:not([data-state="loading"])').waitFor();
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
    }
    // tab 1 removes a widget and saves
    await first.getByRole('button', { name: 'Remove By country' }).click();
    await first.getByRole('button', { name: 'Save' }).click();
    await first.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    assert.deepEqual(
      (await stored()).payload.grid.map((w) => w.id),
      ['orders', 'revenue'],
    );

    // tab 2, loaded before that save, renames a widget and saves: refused, nothing lost
    await second.getByRole('button', { name: 'Edit Orders' }).click();
    await second.getByRole('form', { name: 'Widget' }).getByLabel('Title').fill('Orders placed');
    await second.getByRole('form', { name: 'Widget' }).getByRole('button', { name: 'Apply' }).click();
    await second.getByRole('button', { name: 'Save' }).click();
    const notice = second.getByRole('alert', { name: 'Saved elsewhere' });
    await notice.waitFor();
    assert.match(
      await notice.innerText(),
      new RegExp(`changed by ${seeded.email.replace(/[.+]/g, '\\$&')} at \\d{4}-`),
    );
    await shot(h, second, 'editor-conflict');
    assert.deepEqual(
      (await stored()).payload.grid.map((w) => w.id),
      ['orders', 'revenue'],
      'the stale save wrote nothing',
    );
    assert.equal(
      await second.getByRole('button', { name: 'Edit Orders placed' }).count(),
      1,
      'the draft is still on screen',
    );

    // Overwrite: tab 2's draft wins, knowingly
    await notice.getByRole('button', { name: /Overwrite/ }).click();
    await second.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    const overwritten = (await stored()).payload.grid;
    assert.deepEqual(
      overwritten.map((w) => w.id),
      ['orders', 'revenue', 'countries'],
    );
    assert.equal(overwritten[0]!.title, 'Orders placed');

    // tab 1 is now stale in turn: Reload drops its draft for the stored version and a Save then passes
    await first.getByRole('button', { name: 'Edit', exact: true }).click();
    await first.getByRole('button', { name: 'Remove Revenue' }).click();
    await first.getByRole('button', { name: 'Save' }).click();
    await first
      .getByRole('alert', { name: 'Saved elsewhere' })
      .getByRole('button', { name: /Reload/ })
      .click();
    await first.getByRole('button', { name: 'Edit Orders placed' }).waitFor();
    await first.getByRole('button', { name: 'Remove Revenue' }).click();
    await first.getByRole('button', { name: 'Save' }).click();
    await first.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    assert.deepEqual(
      (await stored()).payload.grid.map((w) => w.id),
      ['orders', 'countries'],
    );
    await context.close();
  });
});
