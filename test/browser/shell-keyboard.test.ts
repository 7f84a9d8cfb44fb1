// The dashboard editor by keyboard: the drawer takes focus when it opens, Escape closes it, focus
// returns to the control that opened it (never to <body>), and every control's accessible name
// contains its visible label.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('editor keyboard', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, org) => ((h = harness), (seeded = org)));

  test('focus moves into the drawer and back; Escape closes it; names contain the visible labels', async () => {
    // 12 widgets, as on a busy dashboard
    const grid = Array.from({ length: 12 }, (_, i) => ({
      id: `k${i}`,
      type: 'kpi',
      title: `Kpi ${i}`,
      path: 'count',
      function: 'sum',
      x: (i % 4) * 3,
      y: Math.floor(i / 4) * 2,
      w: 3,
      h: 2,
    }));
    const made = await request(
      h.server,
      'POST',
      '/api/v1/dashboards',
      {
        name: 'Busy',
        key: 'shop::SK::orders',
        source: { type: 'project', id: seeded.sourceId },
        payload: { grid },
      },
      { token: seeded.userToken },
    );
    assert.equal(made.status, 201, made.text);
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${made.body.data.id}`);
    const focused = () =>
      page.evaluate(() => {
        const el = (globalThis as any).document.activeElement;
        return {
          tag: el.tagName as string,
          name: (el.getAttribute('aria-label') ?? el.textContent ?? '').trim() as string,
          inDrawer: Boolean(el.closest('aside.drawer')),
        };
      });

    await page.getByRole('button', { name: 'Edit', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Editing Busy' }).waitFor();
    assert.notEqual((await focused()).tag, 'BODY', 'focus after Edit');

    await page.getByRole('button', { name: 'Add widget' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('form', { name: 'Widget' }).waitFor();
    const inDrawer = await focused();
    assert.ok(inDrawer.inDrawer, `the drawer's first field has focus, not ${JSON.stringify(inDrawer)}`);
    await shot(h, page, 'editor-drawer-focus');
    await page.keyboard.press('Escape');
    await page.getByRole('form', { name: 'Widget' }).waitFor({ state: 'detached' });
    await page.waitForTimeout(100);
    assert.deepEqual(await focused(), { tag: 'BUTTON', name: 'Add widget', inDrawer: false });

    await page.getByRole('button', { name: 'Edit Kpi 5' }).focus();
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: 'Widget' });
    await form.waitFor();
    assert.ok((await focused()).inDrawer);
    await form.getByLabel('Title').fill('Kpi five');
    await form.getByRole('button', { name: 'Apply' }).focus();
    await page.keyboard.press('Enter');
    await form.waitFor({ state: 'detached' });
    await page.waitForTimeout(100);
    assert.deepEqual(await focused(), { tag: 'BUTTON', name: 'Edit Kpi five', inDrawer: false });

    // every editor control: the visible label is part of the accessible name (labels of letters or
    // digits; a lone symbol such as ✕ is an icon, as axe's label-content-name-mismatch treats it)
    const mismatches = await page
      .locator('main button[aria-label]')
      .evaluateAll((buttons) =>
        buttons
          .map((b) => ({ label: (b.textContent ?? '').trim(), name: b.getAttribute('aria-label') ?? '' }))
          .filter(
            (b) => /[\p{L}\p{N}]/u.test(b.label) && !b.name.toLowerCase().includes(b.label.toLowerCase()),
          ),
      );
    assert.deepEqual(mismatches.slice(0, 3), []);

    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForTimeout(100);
    assert.deepEqual(await focused(), { tag: 'BUTTON', name: 'Edit', inDrawer: false });
    await context.close();
  });

  // A field chosen as the form appears, before the browser draws its next frame (a click on a loaded
  // machine, or Playwright's fill: it focuses the field, then types in a later step), keeps the
  // focus: the drawer's own focus moves happen as it is drawn, not a frame later, when they would
  // send the text into the form's first field.
  test('a field chosen as the drawer opens or closes keeps the focus; what is typed goes there', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit By country' }).waitFor();
    const focusedName = await page.evaluate(async () => {
      const doc = (globalThis as any).document;
      doc.querySelector('button[aria-label="Edit By country"]').click();
      // drawn (the render runs in a microtask), not yet a frame later
      await new Promise((resolve) => setTimeout(resolve, 0));
      const path = doc.querySelector('form[aria-label="Widget"] input[name="path"]');
      path.focus();
      path.select();
      for (let i = 0; i < 3; i++)
        await new Promise((resolve) =>
          (globalThis as any).requestAnimationFrame(() => setTimeout(resolve, 0)),
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      return doc.activeElement.getAttribute('name') as string;
    });
    await page.keyboard.insertText('country.SK');
    const form = page.getByRole('form', { name: 'Widget' });
    assert.equal(focusedName, 'path', 'the field chosen keeps the focus');
    assert.equal(await form.getByLabel('Title').inputValue(), 'By country');
    assert.equal(await form.getByLabel('Path (may end in .*)').inputValue(), 'country.SK');

    // Applied, then the widget type chosen before the next frame: focus stays on it.
    const after = await page.evaluate(async () => {
      const doc = (globalThis as any).document;
      doc.querySelector('form[aria-label="Widget"] button[type="submit"]').click();
      await new Promise((resolve) => setTimeout(resolve, 0));
      doc.querySelector('select[name="widget-type"]').focus();
      for (let i = 0; i < 3; i++)
        await new Promise((resolve) =>
          (globalThis as any).requestAnimationFrame(() => setTimeout(resolve, 0)),
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      return doc.activeElement.getAttribute('name') as string;
    });
    assert.equal(after, 'widget-type');
    assert.equal(await form.count(), 0);

    // The editor left, then a control of the view chosen before the next frame: focus stays on it
    // (not taken back to the dashboard's Edit button).
    const left = await page.evaluate(async () => {
      const doc = (globalThis as any).document;
      [...doc.querySelectorAll('main button')].find((b: any) => b.textContent === 'Cancel').click();
      await new Promise((resolve) => setTimeout(resolve, 0));
      doc.querySelector('a[href="/monitors"]').focus();
      for (let i = 0; i < 3; i++)
        await new Promise((resolve) =>
          (globalThis as any).requestAnimationFrame(() => setTimeout(resolve, 0)),
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      return doc.activeElement.getAttribute('href') as string;
    });
    assert.equal(left, '/monitors');
    await page.getByRole('button', { name: 'Edit', exact: true }).waitFor();
    await context.close();
  });
});
