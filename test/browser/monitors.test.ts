// The alerts interface (SPEC 13) in Chromium against a real server whose evaluator runs every second:
// a monitor made through the form with its live preview, its page (history, mute, pause), the
// Monitors page with per-instance rows, channels with "Send test" to a receiver on loopback, and a
// firing monitor marked on the dashboard widget that shows its path. With SCREENSHOTS=1 the
// screenshots go to docs/screenshots/ (monitors.png, monitors-form.png, monitors-dashboard.png).
//   node build-web.mjs && SCREENSHOTS=1 node --import tsx --test test/browser/monitors.test.ts
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { request, uniqueEmail } from '../helpers/server';
import { browserSkipReason } from './browser';
import { seedOrganization, signedInPage, startHarness, type Harness, type Seeded } from './shell-helpers';
import {
  axePage,
  seedWeek,
  expectNoSeriousViolations,
  focusOn,
  monitorsApiMissing,
  waitForState,
} from './monitors-helpers';

const ROOT = path.join(import.meta.dirname, '..', '..');
const KEEP = process.env.SCREENSHOTS === '1';

describe('monitors in the interface', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  let missing: string | false = false;
  let receiver: Server;
  let received = 0;
  let hookUrl = '';
  const shots = () => (KEEP ? path.join(ROOT, 'docs', 'screenshots') : h.shots);

  before(async () => {
    h = await startHarness({ SERVICE_ALERTS_INTERVAL: '1s' });
    seeded = await seedOrganization(h.server);
    await seedWeek(h.server, seeded);
    missing = await monitorsApiMissing(h.server, seeded.userToken);
    if (KEEP) mkdirSync(shots(), { recursive: true });
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    hookUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks/slack`;
  });
  after(async () => {
    await new Promise((resolve) => receiver?.close(resolve));
    await h?.stop();
  });

  /** A monitor made through the API with the user's token. */
  async function apiMonitor(body: Record<string, unknown>): Promise<{ id: string }> {
    const res = await request(
      h.server,
      'POST',
      '/api/v1/monitors',
      {
        type: 'alert',
        status: 'active',
        source_type: 'project',
        source_id: seeded.sourceId,
        alert_timeframe: '1h',
        alert_granularity: '1h',
        ...body,
      },
      { token: seeded.userToken },
    );
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  }

  test('a monitor made through the form: the live preview, then its page (mute, unmute, pause, resume)', async (t) => {
    if (missing) return t.skip(missing);
    const { context, page } = await signedInPage(h, seeded.userToken);
    t.after(() => context.close());
    await page.goto(`${h.server.url}/monitors`);
    await page.getByRole('link', { name: 'New monitor' }).click();
    const form = page.getByRole('form', { name: 'Monitor' });
    await form.waitFor();

    // Without a name the server's 422 is shown at the field.
    await form.getByLabel('Key').fill('shop::SK::orders');
    await form.getByLabel('Path').fill('revenue');
    await form.getByLabel('Threshold').fill('140');
    await form.getByRole('button', { name: 'Create monitor' }).click();
    await page.locator('#mf-name-error').waitFor();
    assert.match(await page.locator('#mf-name-error').innerText(), /\S/);
    assert.equal(await form.getByLabel('Name').getAttribute('aria-invalid'), 'true');

    await form.getByLabel('Name').fill('Revenue spike');
    await form.getByLabel('Granularity').selectOption('1h');
    // The preview: the sentence, and the chart drawn with the threshold line.
    const summary = page.getByTestId('preview-summary');
    await summary.waitFor({ timeout: 15_000 });
    assert.match(await summary.innerText(), /would have fired (\d+ times|once) in the last 7 days/i);
    await page.locator('.monitor-preview canvas').first().waitFor();
    const fired = Number(await page.locator('.preview__plot').getAttribute('data-fired'));
    // revenue is 100 + hours ago over the last 48 hours: above 140 for the buckets 41..47 hours ago
    assert.ok(fired >= 1, `fired ${fired} times`);
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots(), 'monitors-form.png'), fullPage: true });

    await form.getByRole('button', { name: 'Create monitor' }).click();
    await page.waitForURL(/\/monitors\/[^/?]+$/);
    await page.getByRole('heading', { name: 'Revenue spike' }).waitFor();
    await page.getByRole('region', { name: 'History' }).waitFor();

    await page.getByRole('button', { name: 'Mute…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Mute notifications' });
    await dialog.getByRole('button', { name: '1 hour' }).click();
    await page.getByText(/^Muted until/).waitFor();
    await page.getByRole('button', { name: 'Unmute' }).click();
    await page.getByRole('button', { name: 'Mute…' }).waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Paused: not evaluated until resumed.').waitFor();
    assert.equal(await page.locator('main .page-head .state').getAttribute('data-state'), 'paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();

    // Edit: the form opens with the saved monitor; a changed threshold is saved with PUT.
    await page.getByRole('link', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Monitor' });
    assert.equal(await edit.getByLabel('Threshold').inputValue(), '140');
    assert.equal(await edit.getByLabel('Granularity').inputValue(), '1h');
    await edit.getByLabel('Threshold').fill('145');
    await edit.getByRole('button', { name: 'Save monitor' }).click();
    await page.getByRole('heading', { name: 'Revenue spike' }).waitFor();
    await page.locator('.rule-text', { hasText: 'above 145' }).waitFor();
  });

  test('the Monitors page: state badges, last value, a row per instance of a key pattern', async (t) => {
    if (missing) return t.skip(missing);
    await apiMonitor({
      name: 'Revenue dropped',
      alert_metric_key: 'shop::SK::orders',
      alert_metric_path: 'revenue',
      alerts: [{ analysis_strategy: 'threshold', settings: { direction: 'below', value: 200 } }],
    });
    await apiMonitor({
      name: 'Orders per country',
      alert_metric_key: 'shop::(?<country>[^:]+)::orders',
      alert_metric_path: 'count',
      alerts: [{ analysis_strategy: 'threshold', settings: { direction: 'above', value: 1000 } }],
    });
    await apiMonitor({
      name: 'Checkout latency drift',
      status: 'paused',
      alert_metric_key: 'shop::SK::orders',
      alert_metric_path: 'revenue',
      alerts: [{ analysis_strategy: 'cusum', settings: { k: 0.5, h: 5 } }],
    });
    const quiet = await apiMonitor({
      name: 'Czech orders stopped',
      alert_timeframe: '6h',
      alert_metric_key: 'shop::CZ::orders',
      alert_metric_path: 'count',
      alerts: [{ analysis_strategy: 'absence', settings: { period: '3h' } }],
    });
    const muted = await request(
      h.server,
      'POST',
      `/api/v1/monitors/${quiet.id}/mute`,
      { until: new Date(Date.now() + 3_600_000).toISOString() },
      { token: seeded.userToken },
    );
    assert.equal(muted.status, 200, muted.text);
    await waitForState(h.server, seeded.userToken, 'Revenue dropped', 'firing');
    await waitForState(h.server, seeded.userToken, 'Orders per country', 'ok', 2);
    const { context, page } = await signedInPage(h, seeded.userToken);
    t.after(() => context.close());
    await page.goto(`${h.server.url}/monitors`);
    const firing = page.locator('li[data-monitor="Revenue dropped"]');
    await firing.waitFor();
    assert.equal(await firing.getAttribute('data-state'), 'firing');
    assert.match(await firing.locator('.monitor-row__value').innerText(), /\d/);
    const perCountry = page.getByRole('list', { name: 'Instances of Orders per country' });
    await perCountry.waitFor();
    assert.deepEqual((await perCountry.locator('.instances__name').allInnerTexts()).sort(), [
      'country=CZ',
      'country=SK',
    ]);
    // what needs attention first
    const order = await page
      .locator('li.monitor-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
    assert.equal(order[0], 'firing');
    assert.ok(order.includes('paused') && order.includes('muted'), order.join(' '));
    assert.equal(order[order.length - 1], 'paused');
    await page.screenshot({ path: path.join(shots(), 'monitors.png'), fullPage: true });
  });

  test('a firing monitor marks the widget showing its path: a threshold line and a badge', async (t) => {
    if (missing) return t.skip(missing);
    await waitForState(h.server, seeded.userToken, 'Revenue dropped', 'firing');
    const { context, page } = await signedInPage(h, seeded.userToken);
    t.after(() => context.close());
    await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
    const cell = page.locator('[data-cell="revenue"]');
    await cell.locator('.widget[data-state="ready"]').waitFor();
    await cell.getByRole('link', { name: /firing/ }).waitFor();
    // its line, and the line of the monitor made through the form (on the same path)
    assert.equal(await cell.locator('.ts__plot').getAttribute('data-monitor-lines'), '2');
    // the kpi on `count` is watched by no firing monitor: no badge
    assert.equal(await page.locator('[data-cell="orders"] .monitor-flag').count(), 0);
    await page.screenshot({ path: path.join(shots(), 'monitors-dashboard.png') });
    await cell.getByRole('link', { name: /firing/ }).click();
    await page.getByRole('heading', { name: 'Revenue dropped' }).waitFor();
  });

  test('channels: a Slack webhook made in the dialog, its secret masked, "Send test" answered', async (t) => {
    if (missing) return t.skip(missing);
    const { context, page } = await signedInPage(h, seeded.userToken);
    t.after(() => context.close());
    await page.goto(`${h.server.url}/channels`);
    await page.getByRole('button', { name: 'New channel' }).click();
    const dialog = page.getByRole('dialog', { name: 'New channel' });
    await dialog.getByLabel('Name').fill('Ops on Slack');
    await dialog.getByLabel('Kind').selectOption('slack');
    await dialog.getByLabel('Slack incoming webhook URL').fill(hookUrl);
    await dialog.getByRole('button', { name: 'Create channel' }).click();
    const row = page.locator('li[data-channel="Ops on Slack"]');
    await row.waitFor();
    const target = await row.locator('.meta').innerText();
    assert.ok(!target.includes('127.0.0.1'), `the URL is shown masked: ${target}`);
    assert.match(target, /…/);
    await row.getByRole('button', { name: 'Send test to Ops on Slack' }).click();
    await row.getByText(/^Test sent/).waitFor({ timeout: 15_000 });
    assert.ok(received >= 1, 'the receiver got the test');

    // An e-mail channel on a server without [smtp]: the server's 422 is shown at the kind.
    await page.getByRole('button', { name: 'New channel' }).click();
    const mail = page.getByRole('dialog', { name: 'New channel' });
    await mail.getByLabel('Name').fill('Ops by mail');
    await mail.getByLabel('Kind').selectOption('email');
    await mail.getByLabel('Recipients (comma separated)').fill('ops@example.com');
    await mail.getByRole('button', { name: 'Create channel' }).click();
    await mail.locator('#cf-kind-error').getByText(/smtp/).waitFor();
    await page.keyboard.press('Escape');
    await mail.waitFor({ state: 'detached' });

    // The form lists it as a channel to deliver to.
    await page.goto(`${h.server.url}/monitors/new`);
    await page.getByRole('checkbox', { name: /Ops on Slack/ }).waitFor();
  });

  test('keyboard: Tab reaches every control of the form; Escape closes the dialogs, focus returns', async (t) => {
    if (missing) return t.skip(missing);
    const { context, page } = await signedInPage(h, seeded.userToken);
    t.after(() => context.close());
    await page.goto(`${h.server.url}/monitors/new`);
    await page.getByRole('form', { name: 'Monitor' }).waitFor();
    const total = await page
      .locator('main')
      .evaluate(
        (main) =>
          [...main.querySelectorAll('a[href], button, input, select, textarea')]
            .filter((el: any) => !el.disabled && el.offsetParent !== null)
            .map((el: any, i: number) => el.setAttribute('data-kb', String(i))).length,
      );
    assert.ok(total > 15, `${total} controls`);
    const reached = new Set<string>();
    await page.locator('body').focus();
    for (let i = 0; i < total + 20; i++) {
      await page.keyboard.press('Tab');
      const kb = await page.evaluate(
        () => (globalThis as any).document.activeElement?.getAttribute('data-kb') ?? null,
      );
      if (kb !== null) reached.add(kb);
    }
    const missed = await page
      .locator('main [data-kb]')
      .evaluateAll(
        (els, seen) =>
          els
            .filter((el) => !seen.includes(el.getAttribute('data-kb')!))
            .map((el) => el.getAttribute('aria-label') ?? el.getAttribute('name') ?? el.textContent),
        [...reached],
      );
    assert.deepEqual(missed, []);

    // The mute dialog: focus moves in, Escape closes it, focus is back on Mute….
    const { id } = await apiMonitor({
      name: 'Keyboard',
      alert_metric_key: 'shop::SK::orders',
      alert_metric_path: 'count',
      alerts: [{ analysis_strategy: 'threshold', settings: { direction: 'above', value: 1000 } }],
    });
    await page.goto(`${h.server.url}/monitors/${id}`);
    const mute = page.getByRole('button', { name: 'Mute…' });
    await mute.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Mute notifications' });
    await dialog.waitFor();
    assert.ok(
      await dialog.evaluate((d) => d.contains((globalThis as any).document.activeElement)),
      'focus is in the dialog',
    );
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await focusOn(page, 'Mute…');

    await page.goto(`${h.server.url}/channels`);
    const open = page.getByRole('button', { name: 'New channel' });
    await open.focus();
    await page.keyboard.press('Enter');
    const channel = page.getByRole('dialog', { name: 'New channel' });
    await channel.waitFor();
    assert.ok(
      await channel.evaluate((d) => d.contains((globalThis as any).document.activeElement)),
      'focus is in the dialog',
    );
    await page.keyboard.press('Escape');
    await channel.waitFor({ state: 'detached' });
    await focusOn(page, 'New channel');
  });

  // A field chosen as the dialog appears, before the browser draws its next frame (a click on a loaded
  // machine, or Playwright's fill: it focuses the field, then types in a later step), keeps the focus,
  // and a control chosen right after the dialog closes keeps it too: the dialog is shown, focused and
  // gives the focus back as it is drawn, not a frame later.
  test('a field chosen as the dialog opens or closes keeps the focus; what is typed goes there', async (t) => {
    if (missing) return t.skip(missing);
    const { context, page } = await signedInPage(h, seeded.userToken);
    t.after(() => context.close());
    await page.goto(`${h.server.url}/channels`);
    await page.getByRole('button', { name: 'New channel' }).waitFor();
    const chosen = await page.evaluate(async () => {
      const doc = (globalThis as any).document;
      // as a click does: the button takes the focus (the dialog gives it back there), then opens it
      const open = [...doc.querySelectorAll('main button')].find((b: any) => b.textContent === 'New channel');
      open.focus();
      open.click();
      // drawn (the render runs in a microtask), not yet a frame later
      await new Promise((resolve) => setTimeout(resolve, 0));
      const field = doc.querySelector('dialog[aria-label="New channel"] input[name="url"]');
      field?.focus();
      for (let i = 0; i < 3; i++)
        await new Promise((resolve) =>
          (globalThis as any).requestAnimationFrame(() => setTimeout(resolve, 0)),
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { field: field?.getAttribute('name') ?? null, active: doc.activeElement.getAttribute('name') };
    });
    assert.ok(chosen.field, 'the dialog has its URL field');
    assert.equal(chosen.active, chosen.field, 'the field chosen keeps the focus');
    await page.keyboard.insertText('typed');
    const dialog = page.getByRole('dialog', { name: 'New channel' });
    assert.equal(await dialog.getByLabel('Name').inputValue(), '');
    assert.equal(await dialog.locator(`input[name="${chosen.field}"]`).inputValue(), 'typed');

    // Closed, then a link chosen before the next frame: focus stays on it.
    const after = await page.evaluate(async () => {
      const doc = (globalThis as any).document;
      doc.querySelector('dialog[aria-label="New channel"] button.dialog__close').click();
      // the render is a microtask queued by the click: this runs once it is done, before any frame
      await Promise.resolve();
      if (doc.querySelector('dialog')) throw new Error('the dialog is still there');
      doc.querySelector('a[href="/monitors"]').focus();
      for (let i = 0; i < 3; i++)
        await new Promise((resolve) =>
          (globalThis as any).requestAnimationFrame(() => setTimeout(resolve, 0)),
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      return doc.activeElement.getAttribute('href') as string;
    });
    assert.equal(after, '/monitors');
    assert.equal(await dialog.count(), 0);
  });

  test('a viewer reads monitors and channels without the controls that would change them', async (t) => {
    if (missing) return t.skip(missing);
    const inv = await request(
      h.server,
      'POST',
      '/api/v1/organization/invitations',
      { role: 'viewer' },
      { token: seeded.userToken },
    );
    assert.equal(inv.status, 201, inv.text);
    const user = await request(h.server, 'POST', '/api/v1/bootstrap/signup', {
      email: uniqueEmail('viewer'),
      password: 'correct horse battery',
    });
    assert.equal(user.status, 201, user.text);
    const viewer = user.body.data.token.value as string;
    const joined = await request(
      h.server,
      'POST',
      '/api/v1/invitations/accept',
      { token: inv.body.data.token },
      { token: viewer },
    );
    assert.equal(joined.status, 201, joined.text);
    const { context, page } = await signedInPage(h, viewer);
    t.after(() => context.close());
    await page.goto(`${h.server.url}/monitors`);
    await page.getByRole('link', { name: 'Revenue dropped' }).click();
    await page.getByRole('region', { name: 'History' }).waitFor();
    await page.getByTestId('preview-summary').waitFor({ timeout: 15_000 });
    for (const name of ['Edit', 'Mute…', 'Pause', 'Delete'])
      assert.equal(
        await page
          .getByRole('button', { name, exact: true })
          .or(page.getByRole('link', { name, exact: true }))
          .count(),
        0,
        name,
      );
    await page.goto(`${h.server.url}/monitors`);
    await page.locator('li.monitor-row').first().waitFor();
    assert.equal(await page.getByRole('link', { name: 'New monitor' }).count(), 0);
    await page.goto(`${h.server.url}/channels`);
    await page.locator('li[data-channel]').first().waitFor();
    assert.equal(await page.getByRole('button', { name: /^(New channel|Send test|Edit|Delete)/ }).count(), 0);
  });

  for (const scheme of ['light', 'dark'] as const) {
    test(`axe-core: no serious or critical violations on the alert pages, ${scheme}`, async (t) => {
      if (missing) return t.skip(missing);
      const { context, page } = await axePage(h, seeded.userToken, scheme);
      t.after(() => context.close());
      const check = (p: Page, what: string) => expectNoSeriousViolations(p, `${what} (${scheme})`);
      await page.goto(`${h.server.url}/monitors`);
      await page.locator('li.monitor-row').first().waitFor();
      await check(page, 'Monitors');

      await page.goto(`${h.server.url}/monitors/new`);
      const form = page.getByRole('form', { name: 'Monitor' });
      await form.getByLabel('Key').fill('shop::SK::orders');
      await form.getByLabel('Path').fill('revenue');
      await form.getByLabel('Threshold').fill('120');
      await page.getByTestId('preview-summary').waitFor({ timeout: 15_000 });
      await check(page, 'the monitor form with its preview');

      await page.goto(`${h.server.url}/monitors`);
      await page.getByRole('link', { name: 'Revenue dropped' }).click();
      await page.getByRole('region', { name: 'History' }).locator('table, p').first().waitFor();
      await check(page, 'a monitor');
      await page.getByRole('button', { name: 'Mute…' }).click();
      await page.getByRole('dialog', { name: 'Mute notifications' }).waitFor();
      await check(page, 'the mute dialog');
      await page.keyboard.press('Escape');

      await page.goto(`${h.server.url}/channels`);
      await page.locator('li[data-channel]').first().waitFor();
      await check(page, 'Channels');
      await page.getByRole('button', { name: /^Edit/ }).first().click();
      await page.getByRole('dialog').waitFor();
      await check(page, 'the channel dialog');

      await page.goto(`${h.server.url}/d/${seeded.dashboardId}`);
      await page.locator('[data-cell="revenue"] .monitor-flag').waitFor();
      await check(page, 'a dashboard with a firing monitor');
    });
  }
});
