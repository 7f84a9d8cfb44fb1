// The account page in a real browser: the signed-in sessions are listed (this browser marked) and
// another one is ended from there; and sign-in returns only to a path of this site (`?next=`).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

describe('account page: sessions', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, s) => {
    h = harness;
    seeded = s;
  });

  test('lists the sessions, marks this one, and ends another (its cookie stops working)', async () => {
    const other = await request(
      h.server,
      'POST',
      '/api/v1/session',
      { email: seeded.email, password: seeded.password },
      {
        headers: { 'x-service-csrf': '1', 'user-agent': FIREFOX },
      },
    );
    assert.equal(other.status, 201, other.text);
    const otherCookie = other.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc_session='))!
      .split(';')[0]!;
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/account`);
    const sessions = page.getByRole('list', { name: 'Signed-in sessions' });
    await sessions.getByText('Firefox on Linux').waitFor();
    assert.equal(await page.getByTestId('session').count(), 2);
    const mine = page.getByTestId('session').filter({ hasText: 'this browser' });
    assert.equal(await mine.count(), 1);
    assert.equal(
      await mine.getByRole('button', { name: 'End session' }).count(),
      0,
      'this one ends with Sign out',
    );
    await shot(h, page, 'account-sessions');

    const firefox = page.getByTestId('session').filter({ hasText: 'Firefox on Linux' });
    await firefox.getByRole('button', { name: 'End session' }).click();
    await firefox.getByRole('button', { name: 'End it' }).click();
    await page.getByText('Firefox on Linux').waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('session').count(), 1);
    const gone = await request(h.server, 'GET', '/api/v1/session', undefined, {
      headers: { cookie: otherCookie },
    });
    assert.equal(gone.status, 401, 'the ended session is refused at once');
    await shot(h, page, 'account-sessions-ended');
    await context.close();
  });

  test('sign-in returns only to a path of this site: `next` of another host goes to /', async () => {
    for (const next of ['/\\evil.example', '//evil.example', '/\\/evil.example', 'https://evil.example/']) {
      const context = await h.browser.newContext({ viewport: { width: 1024, height: 700 } });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${h.server.url}/signin?next=${encodeURIComponent(next)}`);
      await page.getByLabel('E-mail').fill(seeded.email);
      await page.getByLabel('Password').fill(seeded.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Dashboards' }).waitFor();
      const url = new URL(page.url());
      assert.equal(url.origin, h.server.url, next);
      assert.equal(url.pathname, '/', next);
      await context.close();
    }
  });
});
