// JSON shapes of users, organizations, memberships and user API tokens (SPEC section 4).
import type { AccountContext, Session } from '../../domain/accounts';
import type { MembershipRow, OrganizationRow, UserRow } from '../../storage/accounts';

export const presentUser = (u: UserRow) => ({ id: u.id, email: u.email, name: u.name });

export const presentOrganization = (o: OrganizationRow | null) =>
  o ? { id: o.id, name: o.name, slug: o.slug } : null;

export const presentMembership = (m: MembershipRow | null) =>
  m ? { id: m.id, role: m.role, organization_id: m.organization_id } : null;

/** GET /me */
export const presentAccount = (a: AccountContext) => ({
  user: presentUser(a.user),
  organization: presentOrganization(a.organization),
  membership: presentMembership(a.membership),
});

/** signup and login: the account plus the new token `{value, name}` */
export const presentSession = (s: Session) => ({
  user: presentUser(s.user),
  token: { value: s.token.value, name: s.token.name },
  organization: presentOrganization(s.organization),
  membership: presentMembership(s.membership),
});
