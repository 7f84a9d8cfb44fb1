// Transponders in the interface (SPEC 15, docs/interface.md): on the Sources page a transponder is
// made through the form, reached by keyboard, its live preview shows the derived values of the key's
// last day (and the expression's error while it is wrong); once saved it is listed, can be disabled,
// and its response path is offered in Explore and in the widget form's path list, marked derived.
// With SCREENSHOTS=1 the form with its preview is written to docs/screenshots/transponders.png (and
// transponders-dark.png); otherwise with the run's other screenshots.
//   node build-web.mjs && node --import tsx --test test/browser/transponders.test.ts
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

const ROOT = path.join(import.meta.dirname, '..', '..');
const KEY = 'shop::SK::orders';
const RESPONSE = 'derived.revenue_per_order';

describe('transponders in the interface', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, s) => {
    h = harness;
    seeded = s;
  });

  const where = (name: string) =>
    path.join(process.env.SCREENSHOTS === '1' ? path.join(ROOT, 'docs', 'screenshots') : h.shots, name);
  const screenshot = (page: Page, name: string) => page.screenshot({ path: where(name) });

  test('made through the form with a live preview, then offered in Explore and the widget form', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken, { width: 1280, height: 1100 });
    await page.goto(`${h.server.url}/sources`);
    const section = page.locator('[data-transponders="Web shop"]');
    await section.getByText('No transponders yet.').waitFor();

    // by keyboard: focus the button and press Enter; the form's fields follow in tab order
    await section.getByRole('button', { name: 'New transponder' }).focus();
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: 'New transponder' });
    await form.getByLabel('Name').focus();
    await page.keyboard.type('Revenue per order');
    await page.keyboard.press('Tab');
    await page.keyboard.type(KEY);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate("document.activeElement.getAttribute('aria-label')"), 'Path a');
    await page.keyboard.type('revenue');
    await form.getByRole('button', { name: 'Add path' }).click();
    await form.getByRole('textbox', { name: 'Path b' }).fill('count');
    await form.getByRole('textbox', { name: 'Response path' }).fill(RESPONSE);

    // a wrong expression: the parser's own message, no table
    await form.getByRole('textbox', { name: 'Expression' }).fill('a / c');
    const error = form.getByTestId('preview-error');
    await error.waitFor();
    assert.match(
      await error.innerText(),
      /Unknown variable c: only the paths' variables \(a, b\) can be used/,
    );
    assert.equal(await form.getByTestId('preview-table').count(), 0);

    // the right one: the last day of the key, newest first, with the derived value per bucket
    await form.getByRole('textbox', { name: 'Expression' }).fill('a / b');
    const table = form.getByTestId('preview-table');
    await table.waitFor();
    assert.equal(await error.count(), 0);
    const first = table.locator('tbody tr').first();
    const cells = await first.locator('td').allInnerTexts();
    const [revenue, count, derived] = cells.slice(1).map(Number);
    assert.ok(revenue! > 0 && count! > 0, cells.join(' | '));
    assert.ok(Math.abs(derived! - revenue! / count!) < 1e-3, `${revenue} / ${count} = ${derived}`);
    assert.match(await table.locator('thead').innerText(), new RegExp(RESPONSE.replace('.', '\\.')));
    await screenshot(page, 'transponders.png');
    await page.emulateMedia({ colorScheme: 'dark' });
    // the theme follows the system's (page.evaluate: the page's CSP refuses waitForFunction's eval)
    for (
      let i = 0;
      i < 100 && (await page.evaluate('document.documentElement.dataset.theme')) !== 'dark';
      i++
    )
      await page.waitForTimeout(50);
    assert.equal(await page.evaluate('document.documentElement.dataset.theme'), 'dark');
    await screenshot(page, 'transponders-dark.png');
    await page.emulateMedia({ colorScheme: 'light' });

    await form.getByRole('button', { name: 'Create transponder' }).click();
    const item = section.locator('[data-transponder="Revenue per order"]');
    await item.waitFor();
    assert.match(await item.innerText(), /a = revenue, b = count/);
    const saved = await request(h.server, 'GET', `/api/v1/transponders`, undefined, {
      token: seeded.sourceToken,
      sourceId: seeded.sourceId,
    });
    assert.deepEqual(
      saved.body.data.map((t: { name: string; key: string; config: unknown; enabled: boolean }) => [
        t.name,
        t.key,
        t.config,
        t.enabled,
      ]),
      [
        [
          'Revenue per order',
          KEY,
          { paths: ['revenue', 'count'], expression: 'a / b', response: RESPONSE },
          true,
        ],
      ],
    );

    // Explore offers the derived path, marked, and reads its values
    await page.goto(`${h.server.url}/explore?source=${seeded.sourceId}&key=${encodeURIComponent(KEY)}`);
    const derivedButton = page.getByRole('button', { name: `${RESPONSE} (derived)` });
    await derivedButton.waitFor();
    assert.equal(await derivedButton.getAttribute('data-derived'), '');
    await derivedButton.click();
    await page.locator('table.data th.num', { hasText: RESPONSE }).waitFor();
    await screenshot(page, 'transponders-explore.png');

    // the widget form's path list offers it too, labelled as derived
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}?s.country=SK`);
    await page.locator('[data-widget-id="orders"]:not([data-state="loading"])').waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit Revenue' }).click();
    const option = page.locator(`datalist option[value="${RESPONSE}"]`);
    await option.waitFor({ state: 'attached' });
    assert.equal(await option.getAttribute('label'), 'derived by Revenue per order');

    // disabled from the list: no longer applied, no longer offered
    await page.goto(`${h.server.url}/sources`);
    const toggle = page.getByRole('checkbox', { name: 'Enabled: Revenue per order' });
    await toggle.focus();
    await page.keyboard.press('Space');
    await page.locator('[data-transponder="Revenue per order"].disabled').waitFor();
    const after = await request(h.server, 'GET', `/api/v1/transponders`, undefined, {
      token: seeded.sourceToken,
      sourceId: seeded.sourceId,
    });
    assert.equal(after.body.data[0].enabled, false);
    await context.close();
  });
});
