// The accounts and web sessions repositories on PostgreSQL (src/storage/pg/accounts.ts,
// sessions.ts): the same calls on the SQLite repositories and on the PostgreSQL ones give the same
// answers (refusals, missing rows and byte-order sorting included), and the atomic units hold
// under real concurrency on PostgreSQL (several pools on one database, as several nodes).
// Against the local PostgreSQL (a scratch database, dropped at the end); skipped without one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import {
  createAccountsRepo,
  type AccountsRepo,
  type InvitationRow,
  type MembershipRow,
  type NewAccount,
  type OrganizationRow,
  type UserRow,
  type UserTokenRow,
} from '../../src/storage/accounts';
import { createSessionsRepo, type SessionRow, type SessionsRepo } from '../../src/storage/sessions';
import { createPgAccountsRepo } from '../../src/storage/pg/accounts';
import { createPgSessionsRepo } from '../../src/storage/pg/sessions';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { pgSkip, scratchPgStore, type ScratchStore } from '../helpers/pg-store';

const skip = pgSkip();

const user = (id: string, email: string, created_at = 10): UserRow => ({
  id,
  email,
  name: id === 'u-nameless' ? null : `Name ${id}`,
  password_hash: `hash-${id}`,
  created_at,
});
const organization = (id: string, slug: string): OrganizationRow => ({
  id,
  name: `Org ${id}`,
  slug,
  created_at: 20,
});
const membership = (
  id: string,
  userId: string,
  organizationId: string,
  role = 'viewer',
  created_at = 30,
) => ({
  id,
  user_id: userId,
  organization_id: organizationId,
  role,
  created_at,
});
const token = (id: string, userId: string): UserTokenRow => ({
  id,
  user_id: userId,
  name: `token ${id}`,
  token_hash: `th-${id}`,
  last5: id.slice(-5).padStart(5, '0'),
  created_at: 40,
});
const invitation = (id: string, organizationId: string, created_at: number, ttl = 1_000): InvitationRow => ({
  id,
  organization_id: organizationId,
  role: id.endsWith('editor') ? 'editor' : 'viewer',
  token_hash: `ih-${id}`,
  last5: 'abcde',
  created_by: 'u-owner',
  created_at,
  expires_at: created_at + ttl,
  accepted_by: null,
  accepted_at: null,
});
const account = (u: UserRow, org: OrganizationRow | null): NewAccount => ({
  user: u,
  organization: org,
  membership: org ? membership(`m-${u.id}`, u.id, org.id, 'owner') : null,
  token: token(`t-${u.id}`, u.id),
});
const session = (id: string, userId: string, created_at: number, last_seen_at = created_at): SessionRow => ({
  id,
  user_id: userId,
  token_hash: `sh-${id}`,
  user_agent: id.endsWith('x') ? null : 'agent',
  address: id.endsWith('x') ? null : '203.0.113.7',
  created_at,
  last_seen_at,
});

/** What a call gave: its value, or that it threw (the messages differ between the engines). */
async function outcome(call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { value: await call() };
  } catch {
    return { threw: true };
  }
}

describe('PostgreSQL accounts and sessions repositories', { skip }, () => {
  let scratch: ScratchStore;
  let dir: string;
  let db: Db;
  let sqlite: { accounts: AccountsRepo; sessions: SessionsRepo };
  let postgres: { accounts: AccountsRepo; sessions: SessionsRepo };

  before(async () => {
    scratch = await scratchPgStore();
    dir = mkdtempSync(path.join(os.tmpdir(), 'pg-accounts-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
    sqlite = { accounts: createAccountsRepo(db), sessions: createSessionsRepo(db) };
    postgres = {
      accounts: createPgAccountsRepo(scratch.store),
      sessions: createPgSessionsRepo(scratch.store),
    };
  });
  after(async () => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await scratch?.drop();
  });

  /** Runs `call` on SQLite then on PostgreSQL, asserts the same outcome, returns it. */
  async function same<T>(label: string, call: (r: typeof sqlite) => Promise<T>): Promise<unknown> {
    const expected = await outcome(() => call(sqlite));
    const actual = await outcome(() => call(postgres));
    assert.deepEqual(actual, expected, label);
    return expected;
  }

  test('accounts: every method gives what SQLite gives', async () => {
    const acme = organization('o-acme', 'acme');
    assert.deepEqual(await same('no user yet', (r) => r.accounts.hasAnyUser()), { value: false });
    assert.deepEqual(
      await same('first signup', (r) =>
        r.accounts.createAccount(account(user('u-owner', 'Owner@Example.COM'), acme)),
      ),
      { value: null },
    );
    await same('e-mail taken, any case', (r) =>
      r.accounts.createAccount(account(user('u-x', 'owner@example.com'), organization('o-x', 'x'))),
    );
    await same('slug taken', (r) => r.accounts.createAccount(account(user('u-y', 'y@example.com'), acme)));
    for (const [id, email] of [
      ['u-b', 'b@example.com'],
      ['u-B', 'B2@example.com'],
      ['u-a', 'a@example.com'],
      ['u-nameless', 'nameless@example.com'],
      ['u-late', 'late@example.com'],
    ] as const)
      await same(`signup without organization ${id}`, (r) =>
        r.accounts.createAccount(account(user(id, email), null)),
      );
    assert.deepEqual(await same('a user now', (r) => r.accounts.hasAnyUser()), { value: true });
    // nothing of the refused signups was written
    for (const id of ['u-x', 'u-y', 'u-owner', 'u-nameless', 'missing'])
      await same(`userById ${id}`, (r) => r.accounts.userById(id));
    for (const email of ['OWNER@example.com', 'y@example.com', 'nameless@EXAMPLE.com', 'nobody@example.com'])
      await same(`userByEmail ${email}`, (r) => r.accounts.userByEmail(email));
    for (const id of ['o-acme', 'o-x', 'missing'])
      await same(`organizationById ${id}`, (r) => r.accounts.organizationById(id));
    for (const slug of ['acme', 'ACME', 'x'])
      await same(`slugTaken ${slug}`, (r) => r.accounts.slugTaken(slug));
    for (const id of ['u-owner', 'u-b', 'missing'])
      await same(`membershipByUser ${id}`, (r) => r.accounts.membershipByUser(id));

    // user tokens
    await same('insertUserToken', (r) => r.accounts.insertUserToken(token('t-extra', 'u-b')));
    await same('insertUserToken, hash taken', (r) =>
      r.accounts.insertUserToken({ ...token('t-dup', 'u-b'), token_hash: 'th-t-extra' }),
    );
    await same('insertUserToken, no such user', (r) =>
      r.accounts.insertUserToken(token('t-orphan', 'missing')),
    );
    for (const hash of ['th-t-extra', 'th-t-u-owner', 'th-t-dup', 'missing'])
      await same(`userTokenByHash ${hash}`, (r) => r.accounts.userTokenByHash(hash));
    assert.deepEqual(await same('deleteUserToken', (r) => r.accounts.deleteUserToken('t-extra')), {
      value: true,
    });
    assert.deepEqual(await same('deleteUserToken again', (r) => r.accounts.deleteUserToken('t-extra')), {
      value: false,
    });
    await same('token gone', (r) => r.accounts.userTokenByHash('th-t-extra'));

    // organizations
    await same('createOrganization, already a member', (r) =>
      r.accounts.createOrganization(organization('o-2', 'two'), membership('m-2', 'u-owner', 'o-2', 'owner')),
    );
    await same('createOrganization, slug taken', (r) =>
      r.accounts.createOrganization(organization('o-2', 'acme'), membership('m-2', 'u-b', 'o-2', 'owner')),
    );
    await same('createOrganization, no such user', (r) =>
      r.accounts.createOrganization(
        organization('o-3', 'three'),
        membership('m-3', 'missing', 'o-3', 'owner'),
      ),
    );
    await same('createOrganization', (r) =>
      r.accounts.createOrganization(organization('o-2', 'two'), membership('m-2', 'u-late', 'o-2', 'owner')),
    );
    for (const id of ['o-2', 'o-3'])
      await same(`organizationById ${id}`, (r) => r.accounts.organizationById(id));

    // invitations: a cap of 3 pending at `now`; expired and accepted ones do not count
    const T = 1_000_000;
    await same('invitation that will expire', (r) =>
      r.accounts.insertInvitation(invitation('i-old', 'o-acme', T - 2_000), 3, T - 2_000),
    );
    for (const id of ['i-b', 'i-B', 'i-a-editor'])
      await same(`insertInvitation ${id}`, (r) =>
        r.accounts.insertInvitation(invitation(id, 'o-acme', T), 3, T),
      );
    assert.deepEqual(
      await same('insertInvitation over the cap', (r) =>
        r.accounts.insertInvitation(invitation('i-over', 'o-acme', T), 3, T),
      ),
      { value: false },
    );
    await same('insertInvitation, no such organization', (r) =>
      r.accounts.insertInvitation(invitation('i-orphan', 'missing', T), 3, T),
    );
    await same('insertInvitation, other organization', (r) =>
      r.accounts.insertInvitation(invitation('i-two', 'o-2', T + 1), 3, T),
    );
    await same('pendingInvitations (created_at DESC, id in byte order)', (r) =>
      r.accounts.pendingInvitations('o-acme', T),
    );
    await same('pendingInvitations earlier', (r) => r.accounts.pendingInvitations('o-acme', T - 1_500));
    await same('pendingInvitations none', (r) => r.accounts.pendingInvitations('missing', T));
    for (const hash of ['ih-i-old', 'ih-i-over', 'missing'])
      await same(`invitationByHash ${hash}`, (r) => r.accounts.invitationByHash(hash));

    await same('acceptInvitation', (r) =>
      r.accounts.acceptInvitation('i-a-editor', membership('m-a', 'u-a', 'ignored', 'ignored', 50), T + 5),
    );
    await same('acceptInvitation, already a member', (r) =>
      r.accounts.acceptInvitation('i-b', membership('m-a2', 'u-a', 'o', 'r'), T + 6),
    );
    await same('acceptInvitation, used', (r) =>
      r.accounts.acceptInvitation('i-a-editor', membership('m-b', 'u-b', 'o', 'r'), T + 6),
    );
    await same('acceptInvitation, expired', (r) =>
      r.accounts.acceptInvitation('i-old', membership('m-b', 'u-b', 'o', 'r'), T + 6),
    );
    await same('acceptInvitation, expires that instant', (r) =>
      r.accounts.acceptInvitation('i-b', membership('m-b', 'u-b', 'o', 'r'), T + 1_000),
    );
    await same('acceptInvitation, missing', (r) =>
      r.accounts.acceptInvitation('missing', membership('m-b', 'u-b', 'o', 'r'), T),
    );
    await same('acceptInvitation, other', (r) =>
      r.accounts.acceptInvitation('i-B', membership('m-B', 'u-B', 'o', 'r', 50), T + 7),
    );
    await same('acceptInvitation, nameless', (r) =>
      r.accounts.acceptInvitation('i-b', membership('m-nameless', 'u-nameless', 'o', 'r', 30), T + 8),
    );
    for (const hash of ['ih-i-a-editor', 'ih-i-B'])
      await same(`accepted ${hash}`, (r) => r.accounts.invitationByHash(hash));
    await same('pendingInvitations after accepting', (r) => r.accounts.pendingInvitations('o-acme', T));
    assert.deepEqual(
      await same('deleteInvitation, accepted', (r) => r.accounts.deleteInvitation('i-B', 'o-acme')),
      { value: false },
    );
    assert.deepEqual(
      await same('deleteInvitation, other organization', (r) =>
        r.accounts.deleteInvitation('i-two', 'o-acme'),
      ),
      { value: false },
    );
    assert.deepEqual(await same('deleteInvitation', (r) => r.accounts.deleteInvitation('i-two', 'o-2')), {
      value: true,
    });
    await same('deleteInvitation, gone', (r) => r.accounts.deleteInvitation('i-two', 'o-2'));

    // members: created_at then id in byte order ('m-B' before 'm-a')
    const members = (await same('members', (r) => r.accounts.members('o-acme'))) as {
      value: { id: string }[];
    };
    assert.deepEqual(
      members.value.map((m) => m.id),
      ['m-nameless', 'm-u-owner', 'm-B', 'm-a'],
    );
    await same('members none', (r) => r.accounts.members('missing'));
    for (const [id, org] of [
      ['m-a', 'o-acme'],
      ['m-a', 'o-2'],
      ['missing', 'o-acme'],
    ] as const)
      await same(`membershipById ${id} ${org}`, (r) => r.accounts.membershipById(id, org));

    // role changes conditioned on the role read
    await same('updateRole, role changed meanwhile', (r) =>
      r.accounts.updateRole('m-a', 'o-acme', 'viewer', 'admin'),
    );
    await same('updateRole, other organization', (r) =>
      r.accounts.updateRole('m-a', 'o-2', 'editor', 'admin'),
    );
    await same('updateRole', (r) => r.accounts.updateRole('m-a', 'o-acme', 'editor', 'admin'));
    await same('updateRole, missing', (r) => r.accounts.updateRole('missing', 'o-acme', 'editor', 'admin'));
    await same('deleteMembership, role changed meanwhile', (r) =>
      r.accounts.deleteMembership('m-a', 'o-acme', 'editor'),
    );
    await same('deleteMembership', (r) => r.accounts.deleteMembership('m-a', 'o-acme', 'admin'));
    await same('deleteMembership, gone', (r) => r.accounts.deleteMembership('m-a', 'o-acme', 'admin'));
    await same('members after', (r) => r.accounts.members('o-acme'));
    await same('membershipByUser after', (r) => r.accounts.membershipByUser('u-a'));
    // the user who left may now create an organization
    await same('createOrganization after leaving', (r) =>
      r.accounts.createOrganization(organization('o-a', 'a-org'), membership('m-a3', 'u-a', 'o-a', 'owner')),
    );
  });

  test('sessions: every method gives what SQLite gives', async () => {
    for (const [id, email] of [
      ['s-user', 's@example.com'],
      ['s-other', 's2@example.com'],
    ] as const)
      await same(`user ${id}`, (r) => r.accounts.createAccount(account(user(id, email), null)));
    await same('open', (r) => r.sessions.open(session('s-b', 's-user', 100), 0, 0));
    await same('open, same created_at', (r) => r.sessions.open(session('s-B', 's-user', 100), 0, 0));
    await same('open, no agent', (r) => r.sessions.open(session('s-ax', 's-user', 100), 0, 0));
    await same('open, later', (r) => r.sessions.open(session('s-late', 's-user', 200, 500), 0, 0));
    await same('open, other user', (r) => r.sessions.open(session('s-o', 's-other', 100), 0, 0));
    await same('open, hash taken', (r) =>
      r.sessions.open({ ...session('s-dup', 's-user', 300), token_hash: 'sh-s-b' }, 0, 0),
    );
    await same('open, no such user', (r) => r.sessions.open(session('s-orphan', 'missing', 300), 0, 0));
    const listed = (await same('listByUser', (r) => r.sessions.listByUser('s-user'))) as {
      value: SessionRow[];
    };
    assert.deepEqual(
      listed.value.map((s) => s.id),
      ['s-late', 's-B', 's-ax', 's-b'],
    );
    for (const hash of ['sh-s-ax', 'sh-s-dup', 'missing'])
      await same(`byHash ${hash}`, (r) => r.sessions.byHash(hash));
    await same('touch', (r) => r.sessions.touch('s-b', 400));
    await same('touch, missing', (r) => r.sessions.touch('missing', 400));
    await same('touched', (r) => r.sessions.byHash('sh-s-b'));
    // idle at or before 100 (s-B, s-ax), or made at or before 50 (none): gone; s-b was touched
    await same('open, expiring others', (r) => r.sessions.open(session('s-new', 's-user', 600), 100, 50));
    await same('listByUser after expiry', (r) => r.sessions.listByUser('s-user'));
    await same('other user untouched', (r) => r.sessions.listByUser('s-other'));
    await same('open, expiring by age', (r) => r.sessions.open(session('s-newer', 's-user', 700), 0, 200));
    await same('listByUser after age expiry', (r) => r.sessions.listByUser('s-user'));
    await same('remove, other user', (r) => r.sessions.remove('s-newer', 's-other'));
    await same('remove', (r) => r.sessions.remove('s-newer', 's-user'));
    await same('remove, gone', (r) => r.sessions.remove('s-newer', 's-user'));
    await same('removeById', (r) => r.sessions.removeById('s-o'));
    await same('removeById, missing', (r) => r.sessions.removeById('missing'));
    await same('listByUser at the end', (r) => r.sessions.listByUser('s-user'));
    await same('other at the end', (r) => r.sessions.listByUser('s-other'));
    await same('listByUser, none', (r) => r.sessions.listByUser('missing'));
  });
});

describe('PostgreSQL accounts: the atomic units under concurrency', { skip }, () => {
  let scratch: ScratchStore;
  let second: PgStore;
  /** two repositories on two pools, as two nodes */
  let nodes: [AccountsRepo, AccountsRepo];
  const count = async (sql: string, params: unknown[] = []) =>
    (await scratch.store.one<{ n: number }>(sql, params))!.n;

  before(async () => {
    scratch = await scratchPgStore();
    second = createPgStore(scratch.url);
    nodes = [createPgAccountsRepo(scratch.store), createPgAccountsRepo(second)];
    await nodes[0].createAccount(account(user('u-owner', 'owner@example.com'), organization('o-1', 'one')));
  });
  after(async () => {
    await second?.close();
    await scratch?.drop();
  });
  const on = (i: number) => nodes[i % 2]!;

  test('20 invitations at once against a cap of 5: exactly 5 inserted', async () => {
    const T = 5_000;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => on(i).insertInvitation(invitation(`i-${i}`, 'o-1', T), 5, T)),
    );
    assert.equal(results.filter(Boolean).length, 5);
    assert.equal(await count("SELECT COUNT(*) AS n FROM invitations WHERE organization_id = 'o-1'"), 5);
  });

  test('two signups with one e-mail at once: one wins, the other writes nothing', async () => {
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all([
        on(0).createAccount(
          account(
            user(`u-r${round}-a`, `Same${round}@example.com`),
            organization(`o-r${round}-a`, `r${round}-a`),
          ),
        ),
        on(1).createAccount(
          account(
            user(`u-r${round}-b`, `same${round}@EXAMPLE.com`),
            organization(`o-r${round}-b`, `r${round}-b`),
          ),
        ),
      ]);
      assert.deepEqual([...results].sort(), ['email_taken', null].sort(), `round ${round}`);
      assert.equal(
        await count('SELECT COUNT(*) AS n FROM users WHERE email_lower = $1', [`same${round}@example.com`]),
        1,
      );
      assert.equal(
        await count('SELECT COUNT(*) AS n FROM organizations WHERE slug LIKE $1', [`r${round}-%`]),
        1,
      );
      assert.equal(
        await count('SELECT COUNT(*) AS n FROM user_tokens WHERE user_id LIKE $1', [`u-r${round}-%`]),
        1,
      );
    }
  });

  test('two signups with one slug at once: one wins, the other writes no user', async () => {
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all([
        on(0).createAccount(
          account(
            user(`u-s${round}-a`, `s${round}a@example.com`),
            organization(`o-s${round}-a`, `s${round}`),
          ),
        ),
        on(1).createAccount(
          account(
            user(`u-s${round}-b`, `s${round}b@example.com`),
            organization(`o-s${round}-b`, `s${round}`),
          ),
        ),
      ]);
      assert.deepEqual([...results].sort(), ['slug_taken', null].sort(), `round ${round}`);
      assert.equal(await count('SELECT COUNT(*) AS n FROM users WHERE id LIKE $1', [`u-s${round}-%`]), 1);
    }
  });

  test('one user creating 10 organizations at once: one, the others refused as a member', async () => {
    await nodes[0].createAccount(account(user('u-founder', 'founder@example.com'), null));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        on(i).createOrganization(
          organization(`o-f${i}`, `f${i}`),
          membership(`m-f${i}`, 'u-founder', `o-f${i}`, 'owner'),
        ),
      ),
    );
    assert.equal(results.filter((r) => r === null).length, 1);
    assert.equal(results.filter((r) => r === 'member').length, 9);
    assert.equal(await count("SELECT COUNT(*) AS n FROM organizations WHERE slug LIKE 'f%'"), 1);
  });

  test('invitations accepted at once: one per user, one user per invitation', async () => {
    const T = 10_000;
    for (let i = 0; i < 10; i++) {
      assert.equal(await nodes[0].insertInvitation(invitation(`j-${i}`, 'o-1', T), 100, T), true);
      await nodes[0].createAccount(account(user(`u-j${i}`, `j${i}@example.com`), null));
    }
    await nodes[0].createAccount(account(user('u-joiner', 'joiner@example.com'), null));
    const oneUser = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        on(i).acceptInvitation(`j-${i}`, membership(`m-joiner-${i}`, 'u-joiner', 'o'), T),
      ),
    );
    assert.equal(oneUser.filter((r) => r === null).length, 1);
    assert.equal(oneUser.filter((r) => r === 'member').length, 9);
    assert.equal(await count("SELECT COUNT(*) AS n FROM invitations WHERE accepted_by = 'u-joiner'"), 1);

    const free = oneUser.findIndex((r) => r === 'member');
    const oneInvitation = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        on(i).acceptInvitation(`j-${free}`, membership(`m-j${i}`, `u-j${i}`, 'o'), T),
      ),
    );
    assert.equal(oneInvitation.filter((r) => r === null).length, 1);
    assert.equal(oneInvitation.filter((r) => r === 'gone').length, 9);
    assert.equal(await count("SELECT COUNT(*) AS n FROM memberships WHERE user_id LIKE 'u-j_'"), 1);
  });

  test('role changes at once from the role read: exactly one applies', async () => {
    await nodes[0].createAccount(account(user('u-role', 'role@example.com'), null));
    const T = 20_000;
    await nodes[0].insertInvitation(invitation('k-role', 'o-1', T), 100, T);
    assert.equal(await nodes[0].acceptInvitation('k-role', membership('m-role', 'u-role', 'o'), T), null);
    const roles = ['admin', 'editor', 'owner', 'admin', 'editor', 'owner', 'admin', 'editor'];
    const results = await Promise.all(
      roles.map((role, i) => on(i).updateRole('m-role', 'o-1', 'viewer', role)),
    );
    assert.equal(results.filter(Boolean).length, 1);
    const now = (await nodes[0].membershipById('m-role', 'o-1'))!.role;
    const deletes = await Promise.all(
      [now, now, 'viewer', now].map((role, i) => on(i).deleteMembership('m-role', 'o-1', role)),
    );
    assert.deepEqual(deletes.filter(Boolean).length, 1);
  });
});
