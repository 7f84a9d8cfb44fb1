// axe-core on every page of the interface, in the light and the dark theme, in view and edit mode
// (SPEC 10, issue 24 point 7): no serious or critical violation anywhere. Each page is loaded in a
// real Chromium against a real server with an organization seeded with data.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { seriousViolations } from './axe-check';
import {
  shot,
  signedInPage,
  startHarness,
  withSeededHarness,
  type Harness,
  type Seeded,
} from './shell-helpers';
import { waitForWidgets } from './demo-pages';

const THEMES = ['light', 'dark'] as const;

describe('axe-core on every page, both themes', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, s) => {
    h = harness;
    seeded = s;
  });

  test('signed-in pages, view and edit mode', async () => {
    const share = await request(
      h.server,
      'POST',
      `/api/v1/dashboards/${seeded.dashboardId}/shares`,
      {},
      {
        token: seeded.userToken,
      },
    );
    assert.equal(share.status, 201, share.text);
    const sharePath = new URL(share.body.data.url ?? share.body.data.path, h.server.url).pathname;
    const found: string[] = [];
    for (const theme of THEMES) {
      const { context, page } = await signedInPage(h, seeded.userToken);
      await context.addInitScript(`localStorage.setItem('theme', '${theme}')`);
      const visit = async (name: string, path: string, ready: () => Promise<unknown>) => {
        await page.goto(`${h.server.url}${path}`);
        await ready();
        for (const v of await seriousViolations(page)) found.push(`${theme} ${name}: ${v}`);
      };
      await visit('dashboards', '/', () => page.getByRole('heading', { name: 'Dashboards' }).waitFor());
      await visit('dashboard', `/d/${seeded.dashboardId}`, () => waitForWidgets(page, 1));
      await page.getByRole('button', { name: 'Edit' }).click();
      await page.getByRole('button', { name: 'Add widget' }).waitFor();
      for (const v of await seriousViolations(page)) found.push(`${theme} dashboard (editing): ${v}`);
      await shot(h, page, `axe-editing-${theme}`);
      await page.getByRole('button', { name: 'Add widget' }).click();
      await page.getByRole('form', { name: 'Widget' }).waitFor();
      for (const v of await seriousViolations(page)) found.push(`${theme} widget drawer: ${v}`);
      await visit('explore', '/explore', () => page.getByRole('heading', { name: 'Explore' }).waitFor());
      await visit('sources', '/sources', () => page.getByRole('heading', { name: 'Sources' }).waitFor());
      await visit('account', '/account', () => page.getByRole('heading', { name: 'Members' }).waitFor());
      await context.close();

      const guest = await h.browser.newContext({ viewport: { width: 1280, height: 800 } });
      await guest.addInitScript(`localStorage.setItem('theme', '${theme}')`);
      const gpage = await guest.newPage();
      gpage.setDefaultTimeout(10_000);
      await gpage.goto(`${h.server.url}/signin`);
      await gpage.getByRole('heading', { name: 'Sign in' }).waitFor();
      for (const v of await seriousViolations(gpage)) found.push(`${theme} signin: ${v}`);
      await gpage.goto(`${h.server.url}${sharePath}`);
      await waitForWidgets(gpage, 1);
      for (const v of await seriousViolations(gpage)) found.push(`${theme} share link: ${v}`);
      await gpage.goto(`${h.server.url}/invite#svc_inv_${'x'.repeat(43)}`);
      await gpage.getByRole('heading', { name: 'Invitation' }).waitFor();
      for (const v of await seriousViolations(gpage)) found.push(`${theme} invite (unusable link): ${v}`);
      await guest.close();
    }
    assert.deepEqual(found, []);
  });

  test('first-run setup page', async () => {
    const fresh = await startHarness();
    try {
      for (const theme of THEMES) {
        const context = await fresh.browser.newContext({ viewport: { width: 1280, height: 800 } });
        await context.addInitScript(`localStorage.setItem('theme', '${theme}')`);
        const page = await context.newPage();
        page.setDefaultTimeout(10_000);
        await page.goto(`${fresh.server.url}/`);
        await page.waitForURL(/\/setup$/);
        await page.getByRole('button').first().waitFor();
        assert.deepEqual(await seriousViolations(page), [], theme);
        await context.close();
      }
    } finally {
      await fresh.stop();
    }
  });
});
