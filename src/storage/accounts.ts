// Users, organizations, memberships and user API tokens: prepared statements only.
import type { Db } from './db';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  password_hash: string;
  created_at: number;
}
export interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
  created_at: number;
}
export interface MembershipRow {
  id: string;
  user_id: string;
  organization_id: string;
  role: string;
  created_at: number;
}
export interface UserTokenRow {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  last5: string;
  created_at: number;
}

export interface InvitationRow {
  id: string;
  organization_id: string;
  role: string;
  token_hash: string;
  last5: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  accepted_by: string | null;
  accepted_at: number | null;
}
/** A member as the members list shows it: the membership and its user's public fields. */
export interface MemberRow extends MembershipRow {
  email: string;
  name: string | null;
}

export function createAccountsRepo(db: Db) {
  const q = {
    insertUser: db.prepare<[string, string, string, string | null, string, number]>(
      'INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    userById: db.prepare<[string], UserRow>(
      'SELECT id, email, name, password_hash, created_at FROM users WHERE id = ?',
    ),
    userByEmail: db.prepare<[string], UserRow>(
      'SELECT id, email, name, password_hash, created_at FROM users WHERE email_lower = ?',
    ),
    insertOrganization: db.prepare<[string, string, string, number]>(
      'INSERT INTO organizations (id, name, slug, created_at) VALUES (?, ?, ?, ?)',
    ),
    organizationById: db.prepare<[string], OrganizationRow>('SELECT * FROM organizations WHERE id = ?'),
    slugTaken: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM organizations WHERE slug = ?'),
    insertMembership: db.prepare<[string, string, string, string, number]>(
      'INSERT INTO memberships (id, user_id, organization_id, role, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    membershipByUser: db.prepare<[string], MembershipRow>('SELECT * FROM memberships WHERE user_id = ?'),
    insertUserToken: db.prepare<[string, string, string, string, string, number]>(
      'INSERT INTO user_tokens (id, user_id, name, token_hash, last5, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    userTokenByHash: db.prepare<[string], UserTokenRow>('SELECT * FROM user_tokens WHERE token_hash = ?'),
    deleteUserToken: db.prepare<[string]>('DELETE FROM user_tokens WHERE id = ?'),
    membershipById: db.prepare<[string, string], MembershipRow>(
      'SELECT * FROM memberships WHERE id = ? AND organization_id = ?',
    ),
    members: db.prepare<[string], MemberRow>(
      `SELECT m.*, u.email, u.name FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.organization_id = ? ORDER BY m.created_at, m.id`,
    ),
    updateRole: db.prepare<[string, string, string]>(
      'UPDATE memberships SET role = ? WHERE id = ? AND organization_id = ?',
    ),
    deleteMembership: db.prepare<[string, string]>(
      'DELETE FROM memberships WHERE id = ? AND organization_id = ?',
    ),
    insertInvitation: db.prepare<[string, string, string, string, string, string | null, number, number]>(
      `INSERT INTO invitations (id, organization_id, role, token_hash, last5, created_by, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    invitationByHash: db.prepare<[string], InvitationRow>('SELECT * FROM invitations WHERE token_hash = ?'),
    pendingInvitations: db.prepare<[string, number], InvitationRow>(
      `SELECT * FROM invitations WHERE organization_id = ? AND accepted_at IS NULL AND expires_at > ?
       ORDER BY created_at DESC, id`,
    ),
    deleteInvitation: db.prepare<[string, string]>(
      'DELETE FROM invitations WHERE id = ? AND organization_id = ? AND accepted_at IS NULL',
    ),
    acceptInvitation: db.prepare<[string, number, string]>(
      'UPDATE invitations SET accepted_by = ?, accepted_at = ? WHERE id = ? AND accepted_at IS NULL',
    ),
    countPending: db.prepare<[string, number], { n: number }>(
      'SELECT COUNT(*) AS n FROM invitations WHERE organization_id = ? AND accepted_at IS NULL AND expires_at > ?',
    ),
    anyUser: db.prepare<[], { one: number }>('SELECT 1 AS one FROM users LIMIT 1'),
  };
  return {
    insertUser: (u: UserRow) =>
      q.insertUser.run(u.id, u.email, u.email.toLowerCase(), u.name, u.password_hash, u.created_at),
    userById: (id: string) => q.userById.get(id),
    userByEmail: (email: string) => q.userByEmail.get(email.toLowerCase()),
    insertOrganization: (o: OrganizationRow) => q.insertOrganization.run(o.id, o.name, o.slug, o.created_at),
    organizationById: (id: string) => q.organizationById.get(id),
    slugTaken: (slug: string) => q.slugTaken.get(slug) !== undefined,
    insertMembership: (m: MembershipRow) =>
      q.insertMembership.run(m.id, m.user_id, m.organization_id, m.role, m.created_at),
    membershipByUser: (userId: string) => q.membershipByUser.get(userId),
    insertUserToken: (t: UserTokenRow) =>
      q.insertUserToken.run(t.id, t.user_id, t.name, t.token_hash, t.last5, t.created_at),
    userTokenByHash: (hash: string) => q.userTokenByHash.get(hash),
    /** sign-out: the token stops working at once (user tokens are not cached) */
    deleteUserToken: (id: string) => q.deleteUserToken.run(id).changes > 0,
    hasAnyUser: () => q.anyUser.get() !== undefined,
    membershipById: (id: string, organizationId: string) => q.membershipById.get(id, organizationId),
    members: (organizationId: string) => q.members.all(organizationId),
    updateRole: (id: string, organizationId: string, role: string) =>
      q.updateRole.run(role, id, organizationId).changes > 0,
    deleteMembership: (id: string, organizationId: string) =>
      q.deleteMembership.run(id, organizationId).changes > 0,
    insertInvitation: (i: InvitationRow) =>
      q.insertInvitation.run(
        i.id,
        i.organization_id,
        i.role,
        i.token_hash,
        i.last5,
        i.created_by,
        i.created_at,
        i.expires_at,
      ),
    invitationByHash: (hash: string) => q.invitationByHash.get(hash),
    pendingInvitations: (organizationId: string, now: number) =>
      q.pendingInvitations.all(organizationId, now),
    pendingInvitationCount: (organizationId: string, now: number) =>
      q.countPending.get(organizationId, now)!.n,
    deleteInvitation: (id: string, organizationId: string) =>
      q.deleteInvitation.run(id, organizationId).changes > 0,
    acceptInvitation: (id: string, userId: string, now: number) =>
      q.acceptInvitation.run(userId, now, id).changes > 0,
  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
