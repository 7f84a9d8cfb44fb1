// Editing never loses work: with unsaved edits, a header link asks first, a reload or a closed tab
// gets the browser's prompt, and the draft (kept in sessionStorage) survives a reload and a sign-in
// in between (the session ended elsewhere), then saves.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('unsaved drafts', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  const storedIds = async () =>
    (
      (
        await request(h.server, 'GET', `/api/v1/dashboards/${seeded.dashboardId}`, undefined, {
          token: seeded.userToken,
        })
      ).body.data.payload.grid as { id: string }[]
    ).map((w) => w.id);

  test('a header link asks, a reload keeps the draft, a sign-in in between keeps it, Save writes it', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.locator('[data-widget-id="orders"]:not([data-state="loading"])').waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Remove By country' }).click();

    // a header link: the question comes; "stay" keeps the editor and the draft
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.waitForTimeout(300);
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /^confirm: .*unsaved changes/);
    assert.ok(page.url().endsWith(`/d/${seeded.dashboardId}`));
    assert.equal(
      await page.getByRole('button', { name: 'Remove By country' }).count(),
      0,
      'the draft is still on screen',
    );

    // a reload: the draft comes back in the editor
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'unsaved changes' }).waitFor();
    await page.getByRole('button', { name: 'Save' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Remove By country' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Remove Orders' }).count(), 1);

    // signed out in another tab: Save answers 401, the sign-in page comes, the draft survives it
    const other = await context.newPage();
    await other.goto(`${h.server.url}/account`);
    await other.evaluate(() =>
      fetch('/api/v1/session', { method: 'DELETE', headers: { 'x-service-csrf': '1' } }),
    );
    await other.close();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.deepEqual(await storedIds(), ['orders', 'revenue', 'countries'], 'nothing saved while signed out');
    await page.getByLabel('E-mail').fill(seeded.email);
    await page.getByLabel('Password').fill(seeded.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('status').filter({ hasText: 'unsaved changes' }).waitFor();
    await shot(h, page, 'draft-restored');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    assert.deepEqual(await storedIds(), ['orders', 'revenue']);

    // with nothing unsaved a link just goes
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.waitForURL(/\/sources$/);
    await context.close();
  });

  test('closing the tab with unsaved edits gets the browser prompt', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Taller Orders' }).click();
    const dialog = new Promise<string>((resolve) =>
      page.once('dialog', (d) => {
        resolve(d.type());
        void d.dismiss();
      }),
    );
    await page.close({ runBeforeUnload: true });
    assert.equal(await dialog, 'beforeunload');
    // the dismissed prompt leaves the page in the middle of closing: the context closes with it
    await context.close().catch(() => undefined);
  });
});
