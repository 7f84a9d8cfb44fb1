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
    updateRole: db.prepare<[string, string, string, string]>(
      'UPDATE memberships SET role = ? WHERE id = ? AND organization_id = ? AND role = ?',
    ),
    deleteMembership: db.prepare<[string, string, string]>(
      'DELETE FROM memberships WHERE id = ? AND organization_id = ? AND role = ?',
    ),
    insertInvitation: db.prepare<[string, string, string, string, string, string | null, number, number]>(
      `INSERT INTO invitations (id, organization_id, role, token_hash, last5, created_by, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    invitationByHash: db.prepare<[string], InvitationRow>('SELECT * FROM invitations WHERE token_hash = ?'),
    invitationById: db.prepare<[string], InvitationRow>('SELECT * FROM invitations WHERE id = ?'),
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
  /** One IMMEDIATE transaction: what it reads still holds when it writes. */
  const atomically = <T>(fn: () => T): T => db.transaction(fn).immediate();
  const insertUser = (u: UserRow) =>
    q.insertUser.run(u.id, u.email, u.email.toLowerCase(), u.name, u.password_hash, u.created_at);
  const insertOrganization = (o: OrganizationRow) =>
    q.insertOrganization.run(o.id, o.name, o.slug, o.created_at);
  const insertMembership = (m: MembershipRow) =>
    q.insertMembership.run(m.id, m.user_id, m.organization_id, m.role, m.created_at);
  const insertUserToken = (t: UserTokenRow) =>
    q.insertUserToken.run(t.id, t.user_id, t.name, t.token_hash, t.last5, t.created_at);
  return {
    userById: async (id: string): Promise<UserRow | undefined> => q.userById.get(id),
    userByEmail: async (email: string): Promise<UserRow | undefined> =>
      q.userByEmail.get(email.toLowerCase()),
    organizationById: async (id: string): Promise<OrganizationRow | undefined> => q.organizationById.get(id),
    slugTaken: async (slug: string): Promise<boolean> => q.slugTaken.get(slug) !== undefined,
    membershipByUser: async (userId: string): Promise<MembershipRow | undefined> =>
      q.membershipByUser.get(userId),
    /** A token of a user who exists (login): one insert. */
    insertUserToken: async (t: UserTokenRow): Promise<void> => void insertUserToken(t),
    userTokenByHash: async (hash: string): Promise<UserTokenRow | undefined> => q.userTokenByHash.get(hash),
    /** sign-out: the token stops working at once (user tokens are not cached) */
    deleteUserToken: async (id: string): Promise<boolean> => q.deleteUserToken.run(id).changes > 0,
    hasAnyUser: async (): Promise<boolean> => q.anyUser.get() !== undefined,
    membershipById: async (id: string, organizationId: string): Promise<MembershipRow | undefined> =>
      q.membershipById.get(id, organizationId),
    members: async (organizationId: string): Promise<MemberRow[]> => q.members.all(organizationId),
    /**
     * Atomic: the role changes only while the member still has `fromRole` (the role the caller's
     * checks were made on); false when the row is gone or its role changed meanwhile.
     */
    updateRole: async (
      id: string,
      organizationId: string,
      fromRole: string,
      role: string,
    ): Promise<boolean> => q.updateRole.run(role, id, organizationId, fromRole).changes > 0,
    /** Atomic like updateRole: deletes only while the member still has `role`. */
    deleteMembership: async (id: string, organizationId: string, role: string): Promise<boolean> =>
      q.deleteMembership.run(id, organizationId, role).changes > 0,
    /**
     * Atomic: inserts the invitation unless the organization already has `max` pending ones at
     * `now` (the count and the insert in one transaction); false when the cap is reached.
     */
    insertInvitation: async (i: InvitationRow, max: number, now: number): Promise<boolean> =>
      atomically(() => {
        if (q.countPending.get(i.organization_id, now)!.n >= max) return false;
        q.insertInvitation.run(
          i.id,
          i.organization_id,
          i.role,
          i.token_hash,
          i.last5,
          i.created_by,
          i.created_at,
          i.expires_at,
        );
        return true;
      }),
    invitationByHash: async (hash: string): Promise<InvitationRow | undefined> =>
      q.invitationByHash.get(hash),
    pendingInvitations: async (organizationId: string, now: number): Promise<InvitationRow[]> =>
      q.pendingInvitations.all(organizationId, now),
    deleteInvitation: async (id: string, organizationId: string): Promise<boolean> =>
      q.deleteInvitation.run(id, organizationId).changes > 0,
    /**
     * Atomic signup: the user, its first token and (when given) its organization with the owner
     * membership, in one transaction that first checks the e-mail and then the slug are free.
     */
    createAccount: async (a: NewAccount): Promise<'email_taken' | 'slug_taken' | null> =>
      atomically(() => {
        if (q.userByEmail.get(a.user.email.toLowerCase())) return 'email_taken';
        if (a.organization && q.slugTaken.get(a.organization.slug)) return 'slug_taken';
        insertUser(a.user);
        if (a.organization && a.membership) {
          insertOrganization(a.organization);
          insertMembership(a.membership);
        }
        insertUserToken(a.token);
        return null;
      }),
    /**
     * Atomic: the organization and its owner's membership, unless the user already belongs to an
     * organization (checked first) or the slug is taken.
     */
    createOrganization: async (
      organization: OrganizationRow,
      owner: MembershipRow,
    ): Promise<'member' | 'slug_taken' | null> =>
      atomically(() => {
        if (q.membershipByUser.get(owner.user_id)) return 'member';
        if (q.slugTaken.get(organization.slug)) return 'slug_taken';
        insertOrganization(organization);
        insertMembership(owner);
        return null;
      }),
    /**
     * Atomic: the invitation is marked accepted and the user's membership (with its role) inserted,
     * only while the invitation is unused and unexpired and the user belongs to no organization.
     */
    acceptInvitation: async (
      invitationId: string,
      membership: MembershipRow,
      now: number,
    ): Promise<'gone' | 'member' | null> =>
      atomically(() => {
        const invitation = q.invitationById.get(invitationId);
        if (!invitation || invitation.accepted_at !== null || invitation.expires_at <= now) return 'gone';
        if (q.membershipByUser.get(membership.user_id)) return 'member';
        if (q.acceptInvitation.run(membership.user_id, now, invitationId).changes === 0) return 'gone';
        insertMembership({
          ...membership,
          organization_id: invitation.organization_id,
          role: invitation.role,
        });
        return null;
      }),
  };
}

/** What a signup writes, all or nothing (createAccount). */
export interface NewAccount {
  user: UserRow;
  organization: OrganizationRow | null;
  membership: MembershipRow | null;
  token: UserTokenRow;
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
