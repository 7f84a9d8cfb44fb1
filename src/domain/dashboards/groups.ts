// Dashboard groups (SPEC 6 extension): named, ordered folders of an organization's dashboards.
// Deleting a group keeps its dashboards, ungrouped.
import { conflict, notFound } from '../../errors';
import { newId, normalizeId } from '../../lib/ids';
import type { Auth } from '../types';
import type { DashboardsContext } from './dashboards';
import { NO_ORGANIZATION } from './dashboards';
import type { ErrorBag } from './issues';
import type { DashboardGroup } from '../../model/dashboard';
import { type ExpectedVersion, checkVersion, nextUpdatedAt } from './versions';

export interface GroupInput {
  name?: string;
  position?: number;
}

/** A page of the organization's groups (paged like dashboards, so no list grows without bound). */
export function listGroups(
  ctx: DashboardsContext,
  auth: Auth,
  limit: number,
  offset: number,
): { groups: DashboardGroup[]; total: number } {
  const organizationId = auth.organizationId;
  if (!organizationId) return { groups: [], total: 0 };
  return {
    groups: ctx.dashboards.listGroups(organizationId, limit, offset),
    total: ctx.dashboards.countGroups(organizationId),
  };
}

export async function findGroup(
  ctx: DashboardsContext,
  auth: Auth,
  rawId: string,
  expected: ExpectedVersion = {},
): Promise<DashboardGroup> {
  const id = normalizeId(rawId);
  const group = id && auth.organizationId ? ctx.dashboards.groupById(id, auth.organizationId) : undefined;
  if (!group) throw notFound();
  await checkVersion(group, expected, 'This dashboard group', async (user) => ctx.nameOf?.(user));
  return group;
}

export function createGroup(
  ctx: DashboardsContext,
  auth: Auth,
  input: GroupInput,
  bag: ErrorBag,
): DashboardGroup {
  const organizationId = auth.organizationId;
  if (!organizationId) throw conflict(NO_ORGANIZATION);
  if (input.name === undefined && !bag.has('name')) bag.add('name', 'is required');
  bag.throwIfAny();
  const now = ctx.now();
  return ctx.dashboards.transaction(() => {
    const group: DashboardGroup = {
      id: newId(),
      organizationId,
      name: input.name!,
      position: input.position ?? (ctx.dashboards.lastGroupPosition(organizationId) ?? 0) + 1,
      insertedAt: now,
      updatedAt: now,
      updatedBy: auth.userId,
    };
    ctx.dashboards.insertGroup(group);
    return group;
  });
}

export function updateGroup(
  ctx: DashboardsContext,
  current: DashboardGroup,
  input: GroupInput,
  bag: ErrorBag,
  userId: string | null = null,
  expected: ExpectedVersion = {},
): DashboardGroup {
  bag.throwIfAny();
  const next: DashboardGroup = {
    ...current,
    name: input.name ?? current.name,
    position: input.position ?? current.position,
    updatedAt: nextUpdatedAt(current, ctx.now()),
    updatedBy: userId,
  };
  ctx.dashboards.updateGroup(next);
  return next;
}

/** Deletes the group (its dashboards stay, with group_id null) and returns it as it was. */
export function removeGroup(ctx: DashboardsContext, group: DashboardGroup): DashboardGroup {
  ctx.dashboards.removeGroup(group.id, group.organizationId, ctx.now());
  return group;
}
