// Inputs of the members and invitations routes (docs/members.md). Bodies are 422 by field.
import * as v from 'valibot';
import {
  GRANTABLE_ROLES,
  INVITATION_TTL_DEFAULT_S,
  INVITATION_TTL_MAX_S,
  type GrantableRole,
} from '../../domain/members';

const role = v.picklist(GRANTABLE_ROLES, `must be one of ${GRANTABLE_ROLES.join(', ')}`);

export const invitationBody = v.object({
  role,
  expires_in: v.optional(
    v.pipe(
      v.number('must be a number of seconds'),
      v.integer('must be a whole number of seconds'),
      v.minValue(300, 'must be at least 300 seconds'),
      v.maxValue(INVITATION_TTL_MAX_S, `must be at most ${INVITATION_TTL_MAX_S} seconds`),
    ),
    INVITATION_TTL_DEFAULT_S,
  ),
});

export const roleBody = v.object({ role });

export const tokenBody = v.object({
  token: v.pipe(v.string('must be a string'), v.maxLength(100, 'is not an invitation token')),
});

export type InvitationInput = { role: GrantableRole; expires_in: number };
