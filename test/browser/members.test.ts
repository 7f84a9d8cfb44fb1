// Members in a real browser (docs/members.md): the owner makes an invitation link on the Account page,
// a new person opens it signed out, creates an account and joins as a viewer, and then sees the
// dashboards without the controls that would change them. axe-core checks both pages.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, uniqueEmail } from '../helpers/server';
import { browserSkipReason } from './browser';
import { seriousViolations } from './axe-check';
import { shot, signedInPage, withSeededHarness, type Harness, type Seeded } from './shell-helpers';

describe('members: invitation links and the viewer role', { skip: browserSkipReason() }, () => {
  let h: Harness;
  let seeded: Seeded;
  withSeededHarness((harness, s) => {
    h = harness;
    seeded = s;
  });

  test('invite by link, join as a viewer, and see no editing controls', async () => {
    const { context, page } = await signedInPage(h, seeded.userToken);
    await page.goto(`${h.server.url}/account`);
    const panel = page.getByRole('region', { name: 'Members' });
    await panel.getByTestId('member').first().waitFor();
    await panel.locator('select[name=role]').selectOption('viewer');
    await panel.getByRole('button', { name: 'Make invitation link' }).click();
    const link = await panel.getByTestId('invitation-link').inputValue();
    assert.match(link, /\/invite#svc_inv_[A-Za-z0-9_-]{43}$/);
    await panel.getByTestId('invitation').first().waitFor();
    assert.deepEqual(await seriousViolations(page), []);
    await shot(h, page, 'members-owner');
    await context.close();

    const guest = await h.browser.newContext({ viewport: { width: 390, height: 844 } });
    const gpage = await guest.newPage();
    gpage.setDefaultTimeout(10_000);
    await gpage.goto(link);
    await gpage.getByRole('heading', { name: /^Join / }).waitFor();
    assert.equal(new URL(gpage.url()).hash, '', 'the token leaves the address bar');
    assert.deepEqual(await seriousViolations(gpage), []);
    const email = uniqueEmail('viewer');
    await gpage.getByLabel('E-mail').fill(email);
    await gpage.getByLabel('Password').fill('correct horse battery');
    await shot(h, gpage, 'members-invite');
    await gpage.getByRole('button', { name: 'Create account and join' }).click();
    await gpage.getByRole('heading', { name: 'Dashboards' }).waitFor();
    await gpage.getByRole('link', { name: 'Orders' }).waitFor();
    assert.equal(await gpage.getByRole('button', { name: 'Delete' }).count(), 0);
    assert.equal(await gpage.getByRole('region', { name: 'New dashboard' }).count(), 0);
    await gpage.getByRole('link', { name: 'Orders' }).click();
    await gpage.getByRole('heading', { name: 'Orders', level: 1 }).waitFor();
    assert.equal(await gpage.getByRole('button', { name: 'Edit' }).count(), 0);
    assert.equal(await gpage.getByRole('button', { name: 'Share' }).count(), 0);
    await shot(h, gpage, 'members-viewer-dashboard');

    // The link worked once.
    const again = await request(h.server, 'POST', '/api/v1/invitations/preview', {
      token: link.split('#')[1],
    });
    assert.equal(again.status, 404);
    const members = await request(h.server, 'GET', '/api/v1/organization/members', undefined, {
      token: seeded.userToken,
    });
    const joined = members.body.data.find((m: { user: { email: string } }) => m.user.email === email);
    assert.equal(joined.role, 'viewer');
    await guest.close();
  });
});
