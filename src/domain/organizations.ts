// Organizations and memberships: a user belongs to at most one organization; its creator is the owner.
import type { Ports } from './ports';
import { conflict, invalidField } from '../errors';
import { newId } from '../lib/ids';
import type { MembershipRow, OrganizationRow } from '../storage/accounts';
import type { UserAuth } from './types';

export const OWNER_ROLE = 'owner';
export const TAKEN = 'has already been taken';
const SLUG_MAX = 64;

/**
 * The URL name of an organization: accents dropped, lower-case, every run of other characters
 * turned into one '-', no '-' at either end, at most 64 characters; 'org' when nothing is left.
 */
export function slugify(name: string): string {
  const ascii = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  const slug = ascii
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return slug === '' ? 'org' : slug;
}

export interface OrganizationWithMembership {
  organization: OrganizationRow;
  membership: MembershipRow;
}

/** A new organization and the user's owner membership (not stored yet). */
export function newOrganization(
  deps: Pick<Ports, 'now'>,
  userId: string,
  name: string,
): OrganizationWithMembership {
  const now = deps.now();
  const organization: OrganizationRow = { id: newId(), name, slug: slugify(name), created_at: now };
  const membership: MembershipRow = {
    id: newId(),
    user_id: userId,
    organization_id: organization.id,
    role: OWNER_ROLE,
    created_at: now,
  };
  return { organization, membership };
}

/**
 * POST /bootstrap/organizations: 409 when the user already belongs to one, 422 when the slug is
 * taken; both checked in the insert's own transaction (accounts.createOrganization).
 */
export async function createOrganization(
  deps: Pick<Ports, 'accounts' | 'now'>,
  userId: string,
  name: string,
): Promise<OrganizationWithMembership> {
  const created = newOrganization(deps, userId, name);
  const outcome = await deps.accounts.createOrganization(created.organization, created.membership);
  if (outcome === 'member') throw alreadyMember();
  if (outcome === 'slug_taken') throw invalidField('name', TAKEN);
  return created;
}

/**
 * 409 when the token's user already belongs to an organization, as the auth middleware read it for
 * this request (checked again inside the insert).
 */
export function assertNoOrganization(auth: UserAuth): void {
  if (auth.organizationId !== null) throw alreadyMember();
}

const alreadyMember = () => conflict('User already belongs to an organization');
