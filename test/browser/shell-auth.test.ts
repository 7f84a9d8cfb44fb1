// The shell in a real browser: first-run account creation, sign-out (the session is revoked) and
// sign-in, against a real server on a fresh data directory.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server';
import { browserSkipReason } from './browser';
import { seedOrganization, shot, signedInPage, startHarness, type Harness } from './shell-helpers';

describe('first run, sign-out and sign-in', { skip: browserSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.stop());

  test('a fresh service shows the first-run form; the account and organization it creates are signed in', async () => {
    const context = await h.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${h.server.url}/explore`);
    await page.waitForURL('**/setup');
    await page.getByLabel('Organization').fill('Acme');
    await page.getByLabel('E-mail').fill('owner@example.com');
    await page.getByLabel('Password (at least 8 characters)').fill('long enough password');
    await shot(h, page, 'setup');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Dashboards' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/');

    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'svc_session');
    assert.ok(session, 'the session is a cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(await page.evaluate('document.cookie'), '', 'scripts cannot read it');
    const asCookie = { headers: { cookie: `svc_session=${session.value}` } };
    const me = await request(h.server, 'GET', '/api/v1/session', undefined, asCookie);
    assert.equal(me.body.data.organization.name, 'Acme');
    assert.match(session.value, /^svc_ses_/, 'a session credential, not an API token');
    assert.equal(
      (await request(h.server, 'GET', '/api/v1/bootstrap/me', undefined, { token: session.value })).status,
      401,
      'not usable as a bearer token',
    );
    const tokens = await request(h.server, 'GET', '/api/v1/session/sessions', undefined, asCookie);
    assert.equal(tokens.body.data.length, 1);

    // Sign out from the account page: the token stops working at once.
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByTestId('account-email').getByText('owner@example.com').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const revoked = await request(h.server, 'GET', '/api/v1/session', undefined, asCookie);
    assert.equal(revoked.status, 401, 'the session ended with the sign-out');
    assert.equal(
      (await context.cookies()).find((c) => c.name === 'svc_session'),
      undefined,
    );

    // A wrong password says so; the right one signs in and returns to the page asked for.
    await page.goto(`${h.server.url}/sources`);
    await page.waitForURL('**/signin?next=%2Fsources');
    await page.getByLabel('E-mail').fill('owner@example.com');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Invalid email or password').waitFor();
    await page.getByLabel('Password').fill('long enough password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sources' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/sources');

    // Once an account exists, /setup is not offered any more.
    const fresh = await h.browser.newContext();
    const other = await fresh.newPage();
    await other.goto(`${h.server.url}/setup`);
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    await fresh.close();
    await context.close();
  });

  test('signing out in one tab sends the other back to sign-in at its next request', async () => {
    const seeded = await seedOrganization(h.server);
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/sources`);
    await page.getByRole('heading', { name: 'Sources' }).waitFor();
    const other = await context.newPage();
    await other.goto(`${h.server.url}/account`);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('link', { name: 'Dashboards' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await context.close();
  });
});
