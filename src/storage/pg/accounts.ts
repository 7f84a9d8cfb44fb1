// The accounts repository on PostgreSQL (cluster mode): the same methods and rows as
// ../accounts.ts, in PostgreSQL's dialect.
//
// SQLite's IMMEDIATE transactions serialised every check with its write; here each atomic unit
// locks what its check reads:
// - insertInvitation locks the organization row (FOR NO KEY UPDATE: invitations of one
//   organization queue, inserts that only reference it do not) before it counts;
// - createOrganization and acceptInvitation lock the user row before they look for a membership,
//   acceptInvitation then the invitation row;
// - createAccount has no row to lock (the e-mail and the slug are new): a concurrent signup that
//   took the e-mail or the slug first makes the insert fail on the unique constraint, which is
//   answered as the check would have (the whole transaction rolled back).
// updateRole and deleteMembership are one conditioned statement each, atomic on their own.
import type { PgStore, Sql } from './client';
import { uniqueViolation } from './client';
import type {
  AccountsRepo,
  InvitationRow,
  MemberRow,
  MembershipRow,
  NewAccount,
  OrganizationRow,
  UserRow,
  UserTokenRow,
} from '../accounts';

const USER = 'id, email, name, password_hash, created_at';
const ORGANIZATION = 'id, name, slug, created_at';
const MEMBERSHIP = 'id, user_id, organization_id, role, created_at';
const USER_TOKEN = 'id, user_id, name, token_hash, last5, created_at';
const INVITATION =
  'id, organization_id, role, token_hash, last5, created_by, created_at, expires_at, accepted_by, accepted_at';

/** Constraint names PostgreSQL gives the UNIQUE columns of 001_service.ts. */
const EMAIL_UNIQUE = 'users_email_lower_key';
const SLUG_UNIQUE = 'organizations_slug_key';
const MEMBER_UNIQUE = 'memberships_user_id_key';

export function createPgAccountsRepo(store: PgStore): AccountsRepo {
  const insertUser = (sql: Sql, u: UserRow) =>
    sql.run(
      'INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [u.id, u.email, u.email.toLowerCase(), u.name, u.password_hash, u.created_at],
    );
  const insertOrganization = (sql: Sql, o: OrganizationRow) =>
    sql.run('INSERT INTO organizations (id, name, slug, created_at) VALUES ($1, $2, $3, $4)', [
      o.id,
      o.name,
      o.slug,
      o.created_at,
    ]);
  const insertMembership = (sql: Sql, m: MembershipRow) =>
    sql.run(
      'INSERT INTO memberships (id, user_id, organization_id, role, created_at) VALUES ($1, $2, $3, $4, $5)',
      [m.id, m.user_id, m.organization_id, m.role, m.created_at],
    );
  const insertUserToken = (sql: Sql, t: UserTokenRow) =>
    sql.run(
      'INSERT INTO user_tokens (id, user_id, name, token_hash, last5, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [t.id, t.user_id, t.name, t.token_hash, t.last5, t.created_at],
    );
  const userByEmail = (sql: Sql, email: string) =>
    sql.one<UserRow>(`SELECT ${USER} FROM users WHERE email_lower = $1`, [email.toLowerCase()]);
  const slugTaken = async (sql: Sql, slug: string) =>
    (await sql.one('SELECT 1 AS one FROM organizations WHERE slug = $1', [slug])) !== undefined;
  const membershipByUser = (sql: Sql, userId: string) =>
    sql.one<MembershipRow>(`SELECT ${MEMBERSHIP} FROM memberships WHERE user_id = $1`, [userId]);
  /** Queues the atomic units about one user's membership (FOR NO KEY UPDATE: the FK checks of its other rows pass). */
  const lockUser = (sql: Sql, userId: string) =>
    sql.run('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);

  return {
    userById: (id) => store.one<UserRow>(`SELECT ${USER} FROM users WHERE id = $1`, [id]),
    userByEmail: (email) => userByEmail(store, email),
    organizationById: (id) =>
      store.one<OrganizationRow>(`SELECT ${ORGANIZATION} FROM organizations WHERE id = $1`, [id]),
    slugTaken: (slug) => slugTaken(store, slug),
    membershipByUser: (userId) => membershipByUser(store, userId),
    insertUserToken: async (t) => void (await insertUserToken(store, t)),
    userTokenByHash: (hash) =>
      store.one<UserTokenRow>(`SELECT ${USER_TOKEN} FROM user_tokens WHERE token_hash = $1`, [hash]),
    deleteUserToken: async (id) => (await store.run('DELETE FROM user_tokens WHERE id = $1', [id])) > 0,
    hasAnyUser: async () => (await store.one('SELECT 1 AS one FROM users LIMIT 1')) !== undefined,
    membershipById: (id, organizationId) =>
      store.one<MembershipRow>(
        `SELECT ${MEMBERSHIP} FROM memberships WHERE id = $1 AND organization_id = $2`,
        [id, organizationId],
      ),
    members: (organizationId) =>
      store.rows<MemberRow>(
        `SELECT m.id, m.user_id, m.organization_id, m.role, m.created_at, u.email, u.name
         FROM memberships m JOIN users u ON u.id = m.user_id
         WHERE m.organization_id = $1 ORDER BY m.created_at, m.id COLLATE "C"`,
        [organizationId],
      ),
    updateRole: async (id, organizationId, fromRole, role) =>
      (await store.run(
        'UPDATE memberships SET role = $1 WHERE id = $2 AND organization_id = $3 AND role = $4',
        [role, id, organizationId, fromRole],
      )) > 0,
    deleteMembership: async (id, organizationId, role) =>
      (await store.run('DELETE FROM memberships WHERE id = $1 AND organization_id = $2 AND role = $3', [
        id,
        organizationId,
        role,
      ])) > 0,
    insertInvitation: (i: InvitationRow, max: number, now: number) =>
      store.tx(async (sql) => {
        await sql.run('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [i.organization_id]);
        const pending = await sql.one<{ n: number }>(
          `SELECT COUNT(*) AS n FROM invitations
           WHERE organization_id = $1 AND accepted_at IS NULL AND expires_at > $2`,
          [i.organization_id, now],
        );
        if (pending!.n >= max) return false;
        await sql.run(
          `INSERT INTO invitations (id, organization_id, role, token_hash, last5, created_by, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [i.id, i.organization_id, i.role, i.token_hash, i.last5, i.created_by, i.created_at, i.expires_at],
        );
        return true;
      }),
    invitationByHash: (hash) =>
      store.one<InvitationRow>(`SELECT ${INVITATION} FROM invitations WHERE token_hash = $1`, [hash]),
    pendingInvitations: (organizationId, now) =>
      store.rows<InvitationRow>(
        `SELECT ${INVITATION} FROM invitations
         WHERE organization_id = $1 AND accepted_at IS NULL AND expires_at > $2
         ORDER BY created_at DESC, id COLLATE "C"`,
        [organizationId, now],
      ),
    deleteInvitation: async (id, organizationId) =>
      (await store.run(
        'DELETE FROM invitations WHERE id = $1 AND organization_id = $2 AND accepted_at IS NULL',
        [id, organizationId],
      )) > 0,
    createAccount: async (a: NewAccount) => {
      try {
        return await store.tx(async (sql) => {
          if (await userByEmail(sql, a.user.email)) return 'email_taken' as const;
          if (a.organization && (await slugTaken(sql, a.organization.slug))) return 'slug_taken' as const;
          await insertUser(sql, a.user);
          if (a.organization && a.membership) {
            await insertOrganization(sql, a.organization);
            await insertMembership(sql, a.membership);
          }
          await insertUserToken(sql, a.token);
          return null;
        });
      } catch (err) {
        // A signup that committed meanwhile took the e-mail or the slug (rolled back whole).
        if (uniqueViolation(err, EMAIL_UNIQUE)) return 'email_taken';
        if (uniqueViolation(err, SLUG_UNIQUE)) return 'slug_taken';
        throw err;
      }
    },
    createOrganization: async (organization: OrganizationRow, owner: MembershipRow) => {
      try {
        return await store.tx(async (sql) => {
          await lockUser(sql, owner.user_id);
          if (await membershipByUser(sql, owner.user_id)) return 'member' as const;
          if (await slugTaken(sql, organization.slug)) return 'slug_taken' as const;
          await insertOrganization(sql, organization);
          await insertMembership(sql, owner);
          return null;
        });
      } catch (err) {
        if (uniqueViolation(err, SLUG_UNIQUE)) return 'slug_taken';
        if (uniqueViolation(err, MEMBER_UNIQUE)) return 'member';
        throw err;
      }
    },
    acceptInvitation: async (invitationId: string, membership: MembershipRow, now: number) => {
      try {
        return await store.tx(async (sql) => {
          await lockUser(sql, membership.user_id);
          const invitation = await sql.one<InvitationRow>(
            `SELECT ${INVITATION} FROM invitations WHERE id = $1 FOR UPDATE`,
            [invitationId],
          );
          if (!invitation || invitation.accepted_at !== null || invitation.expires_at <= now)
            return 'gone' as const;
          if (await membershipByUser(sql, membership.user_id)) return 'member' as const;
          await sql.run('UPDATE invitations SET accepted_by = $1, accepted_at = $2 WHERE id = $3', [
            membership.user_id,
            now,
            invitationId,
          ]);
          await insertMembership(sql, {
            ...membership,
            organization_id: invitation.organization_id,
            role: invitation.role,
          });
          return null;
        });
      } catch (err) {
        if (uniqueViolation(err, MEMBER_UNIQUE)) return 'member';
        throw err;
      }
    },
  };
}
