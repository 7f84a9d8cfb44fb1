// Organizations and memberships: a user belongs to at most one organization; its creator is the owner.
import type { Ports } from './ports';
import { conflict, invalidField } from '../errors';
import { newId } from '../lib/ids';
import { inTransaction } from '../storage/db';
import type { MembershipRow, OrganizationRow } from '../storage/accounts';

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

/**
 * Inserts an organization and the user's owner membership. Call inside a transaction; `field` names
 * the input field a taken slug is reported on.
 */
export function insertOrganizationFor(
  deps: Pick<Ports, 'accounts' | 'now'>,
  userId: string,
  name: string,
  field: string,
): OrganizationWithMembership {
  const now = deps.now();
  const organization: OrganizationRow = { id: newId(), name, slug: slugify(name), created_at: now };
  if (deps.accounts.slugTaken(organization.slug)) throw invalidField(field, TAKEN);
  deps.accounts.insertOrganization(organization);
  const membership: MembershipRow = {
    id: newId(),
    user_id: userId,
    organization_id: organization.id,
    role: OWNER_ROLE,
    created_at: now,
  };
  deps.accounts.insertMembership(membership);
  return { organization, membership };
}

/** POST /bootstrap/organizations: 409 when the user already belongs to one. */
export function createOrganization(deps: Ports, userId: string, name: string): OrganizationWithMembership {
  return inTransaction(deps.db, () => {
    if (deps.accounts.membershipByUser(userId)) throw alreadyMember();
    return insertOrganizationFor(deps, userId, name, 'name');
  });
}

/** 409 when the user already belongs to an organization (checked again inside the insert). */
export function assertNoOrganization(deps: Pick<Ports, 'accounts'>, userId: string): void {
  if (deps.accounts.membershipByUser(userId)) throw alreadyMember();
}

const alreadyMember = () => conflict('User already belongs to an organization');
