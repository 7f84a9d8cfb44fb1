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
  };
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>;
