// Organization members and their roles. The creator is the owner; others join through an invitation
// link that expires and carries a role:
//   owner  — everything, and the only one who makes or unmakes admins
//   admin  — sources, source tokens, members and invitations (below admin), plus everything an editor does
//   editor — dashboards, groups, share links, monitors and channels
//   viewer — reads only: every change is 403 from the API, and the interface hides the controls
// The checks run in the auth middleware (src/http/middleware/auth.ts), before a body is read or an id
// is looked up, so a viewer learns nothing from a write route but 403.
import type { Ports } from './ports';
import { conflict, forbidden, invalidField, notFound } from '../errors';
import { newId } from '../lib/ids';
import { hashToken, mintToken } from '../lib/tokens';
import type { InvitationRow, MemberRow, MembershipRow } from '../storage/accounts';
import type { UserAuth } from '../model/source';

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
/** Roles an invitation or a role change may give (there is one owner). */
export const GRANTABLE_ROLES = ['admin', 'editor', 'viewer'] as const;
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

const RANK: Record<string, number> = { owner: 4, admin: 3, editor: 2, viewer: 1 };

/** Unknown roles (a row written by hand) rank lowest: they may read, never change. */
export function roleRank(role: string | null | undefined): number {
  return role ? (RANK[role] ?? 0) : 0;
}

export function hasRole(role: string | null | undefined, minimum: Role): boolean {
  return roleRank(role) >= RANK[minimum]!;
}

export const INVITATION_PREFIX = 'svc_inv_';
const INVITATION_SHAPE = /^svc_inv_[A-Za-z0-9_-]{43}$/;
export const INVITATION_TTL_DEFAULT_S = 7 * 86_400;
export const INVITATION_TTL_MAX_S = 30 * 86_400;
/** Pending invitations per organization: a bound on what one admin can make the server keep. */
export const PENDING_INVITATIONS_MAX = 100;

type MemberPorts = Pick<Ports, 'accounts' | 'now'>;

function organizationOf(auth: UserAuth): string {
  if (!auth.organizationId) throw conflict('User does not belong to an organization');
  return auth.organizationId;
}

function requireAtLeast(auth: UserAuth, minimum: Role): string {
  const organizationId = organizationOf(auth);
  if (!hasRole(auth.role, minimum)) throw forbidden(`Requires the ${minimum} role`);
  return organizationId;
}

export async function listMembers(deps: MemberPorts, auth: UserAuth): Promise<MemberRow[]> {
  return deps.accounts.members(organizationOf(auth));
}

export interface NewInvitation {
  invitation: InvitationRow;
  /** the link's token, shown once */
  token: string;
}

export async function createInvitation(
  deps: MemberPorts,
  auth: UserAuth,
  role: GrantableRole,
  expiresInSeconds: number,
): Promise<NewInvitation> {
  const organizationId = requireAtLeast(auth, 'admin');
  if (role === 'admin' && !hasRole(auth.role, 'owner')) throw forbidden('Only the owner can invite an admin');
  const now = deps.now();
  const minted = mintToken(INVITATION_PREFIX);
  const invitation: InvitationRow = {
    id: newId(),
    organization_id: organizationId,
    role,
    token_hash: minted.hash,
    last5: minted.last5,
    created_by: auth.userId,
    created_at: now,
    expires_at: now + expiresInSeconds * 1000,
    accepted_by: null,
    accepted_at: null,
  };
  // The cap is counted in the insert's own transaction (accounts.insertInvitation).
  if (!(await deps.accounts.insertInvitation(invitation, PENDING_INVITATIONS_MAX, now))) {
    throw invalidField('base', `at most ${PENDING_INVITATIONS_MAX} pending invitations`);
  }
  return { invitation, token: minted.value };
}

export async function listInvitations(deps: MemberPorts, auth: UserAuth): Promise<InvitationRow[]> {
  return deps.accounts.pendingInvitations(requireAtLeast(auth, 'admin'), deps.now());
}

export async function revokeInvitation(deps: MemberPorts, auth: UserAuth, id: string): Promise<void> {
  if (!(await deps.accounts.deleteInvitation(id, requireAtLeast(auth, 'admin')))) throw notFound();
}

/** The invitation a token names, if it is well formed, known, unused and not expired. */
async function liveInvitation(deps: MemberPorts, token: string): Promise<InvitationRow | null> {
  if (!INVITATION_SHAPE.test(token)) return null;
  const invitation = await deps.accounts.invitationByHash(hashToken(token));
  if (!invitation || invitation.accepted_at !== null || invitation.expires_at <= deps.now()) return null;
  return invitation;
}

export interface InvitationPreview {
  organization: { id: string; name: string };
  role: string;
  expires_at: number;
}

/** What an invitation link offers, for the page that accepts it; 404 for any link that cannot be used. */
export async function previewInvitation(deps: MemberPorts, token: string): Promise<InvitationPreview> {
  const invitation = await liveInvitation(deps, token);
  const organization = invitation
    ? await deps.accounts.organizationById(invitation.organization_id)
    : undefined;
  if (!invitation || !organization) throw notFound();
  return {
    organization: { id: organization.id, name: organization.name },
    role: invitation.role,
    expires_at: invitation.expires_at,
  };
}

/**
 * The signed-in user joins the invitation's organization; 409 when they already belong to one.
 * The checks are repeated in the acceptance's own transaction (accounts.acceptInvitation).
 */
export async function acceptInvitation(
  deps: MemberPorts,
  auth: UserAuth,
  token: string,
): Promise<MembershipRow> {
  const invitation = await liveInvitation(deps, token);
  if (!invitation) throw notFound();
  if (await deps.accounts.membershipByUser(auth.userId)) throw alreadyMember();
  const now = deps.now();
  const membership: MembershipRow = {
    id: newId(),
    user_id: auth.userId,
    organization_id: invitation.organization_id,
    role: invitation.role,
    created_at: now,
  };
  const outcome = await deps.accounts.acceptInvitation(invitation.id, membership, now);
  if (outcome === 'gone') throw notFound();
  if (outcome === 'member') throw alreadyMember();
  return membership;
}

const alreadyMember = () => conflict('User already belongs to an organization');

/** The member a manager may act on: never the owner, never themselves, an admin only by the owner. */
async function manageable(deps: MemberPorts, auth: UserAuth, membershipId: string): Promise<MembershipRow> {
  const organizationId = requireAtLeast(auth, 'admin');
  const member = await deps.accounts.membershipById(membershipId, organizationId);
  if (!member) throw notFound();
  if (member.user_id === auth.userId) throw forbidden('You cannot change your own membership');
  if (member.role === 'owner') throw forbidden('The owner cannot be changed');
  if (member.role === 'admin' && !hasRole(auth.role, 'owner'))
    throw forbidden('Only the owner can change an admin');
  return member;
}

/**
 * The checks of manageable hold for the role they read: the write names that role and does
 * nothing when it changed meanwhile (another request in between), and then everything is checked
 * again on the new row. So the owner is never changed and an admin only by the owner, as when
 * both requests had run one after the other.
 */
export async function changeRole(
  deps: MemberPorts,
  auth: UserAuth,
  membershipId: string,
  role: GrantableRole,
): Promise<MembershipRow> {
  for (;;) {
    const member = await manageable(deps, auth, membershipId);
    if (role === 'admin' && !hasRole(auth.role, 'owner')) throw forbidden('Only the owner can make an admin');
    if (await deps.accounts.updateRole(member.id, member.organization_id, member.role, role)) {
      return { ...member, role };
    }
  }
}

/** Removes a member: their requests stop reaching the organization at once (roles are read per request). */
export async function removeMember(deps: MemberPorts, auth: UserAuth, membershipId: string): Promise<void> {
  for (;;) {
    const member = await manageable(deps, auth, membershipId);
    if (await deps.accounts.deleteMembership(member.id, member.organization_id, member.role)) return;
  }
}
