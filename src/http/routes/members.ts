// Organization members, their roles, and invitation links (docs/members.md). Thin handlers: the
// rules (who may invite whom, who may change whom) live in src/domain/members.ts.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import { notFound } from '../../errors';
import { normalizeId } from '../../lib/ids';
import { formatTimestamp } from '../../shared/time';
import {
  acceptInvitation,
  changeRole,
  createInvitation,
  listInvitations,
  listMembers,
  previewInvitation,
  removeMember,
  revokeInvitation,
} from '../../domain/members';
import type { InvitationRow, MemberRow } from '../../storage/accounts';
import { validate } from '../middleware/validate';
import { invitationBody, roleBody, tokenBody } from '../schemas/members';
import { userAuthOf } from '../state';

function presentMember(m: MemberRow, selfId: string) {
  return {
    id: m.id,
    role: m.role,
    user: { id: m.user_id, email: m.email, name: m.name },
    joined_at: formatTimestamp(m.created_at),
    you: m.user_id === selfId,
  };
}

function presentInvitation(i: InvitationRow) {
  return {
    id: i.id,
    role: i.role,
    last5: i.last5,
    created_at: formatTimestamp(i.created_at),
    expires_at: formatTimestamp(i.expires_at),
  };
}

function idParam(ctx: Context): string {
  const id = normalizeId(ctx.params.id);
  if (!id) throw notFound();
  return id;
}

export function memberRoutes(deps: Deps) {
  const input = {
    invitation: validate({ body: invitationBody }),
    role: validate({ body: roleBody }),
    token: validate({ body: tokenBody }),
  };
  return {
    input,
    async list(ctx: Context): Promise<void> {
      const auth = userAuthOf(ctx);
      ctx.body = { data: (await listMembers(deps, auth)).map((m) => presentMember(m, auth.userId)) };
    },
    async update(ctx: Context): Promise<void> {
      const m = await changeRole(deps, userAuthOf(ctx), idParam(ctx), input.role.body(ctx).role);
      ctx.body = { data: { id: m.id, role: m.role } };
    },
    async remove(ctx: Context): Promise<void> {
      await removeMember(deps, userAuthOf(ctx), idParam(ctx));
      ctx.status = 204;
    },
    async invitations(ctx: Context): Promise<void> {
      ctx.body = { data: (await listInvitations(deps, userAuthOf(ctx))).map(presentInvitation) };
    },
    async invite(ctx: Context): Promise<void> {
      const body = input.invitation.body(ctx);
      const { invitation, token } = await createInvitation(deps, userAuthOf(ctx), body.role, body.expires_in);
      ctx.status = 201;
      // The link carries the token after '#', so it never reaches a server log or a Referer.
      ctx.body = { data: { ...presentInvitation(invitation), token, path: `/invite#${token}` } };
    },
    async revoke(ctx: Context): Promise<void> {
      await revokeInvitation(deps, userAuthOf(ctx), idParam(ctx));
      ctx.status = 204;
    },
    async preview(ctx: Context): Promise<void> {
      const p = await previewInvitation(deps, input.token.body(ctx).token);
      ctx.body = {
        data: { organization: p.organization, role: p.role, expires_at: formatTimestamp(p.expires_at) },
      };
    },
    async accept(ctx: Context): Promise<void> {
      const m = await acceptInvitation(deps, userAuthOf(ctx), input.token.body(ctx).token);
      ctx.status = 201;
      ctx.body = { data: { membership: { id: m.id, role: m.role, organization_id: m.organization_id } } };
    },
  };
}
