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
export async function listGroups(
  ctx: DashboardsContext,
  auth: Auth,
  limit: number,
  offset: number,
): Promise<{ groups: DashboardGroup[]; total: number }> {
  const organizationId = auth.organizationId;
  if (!organizationId) return { groups: [], total: 0 };
  return {
    groups: await ctx.dashboards.listGroups(organizationId, limit, offset),
    total: await ctx.dashboards.countGroups(organizationId),
  };
}

export async function findGroup(
  ctx: DashboardsContext,
  auth: Auth,
  rawId: string,
  expected: ExpectedVersion = {},
): Promise<DashboardGroup> {
  const id = normalizeId(rawId);
  const group =
    id && auth.organizationId ? await ctx.dashboards.groupById(id, auth.organizationId) : undefined;
  if (!group) throw notFound();
  await checkVersion(group, expected, 'This dashboard group', async (user) => ctx.nameOf?.(user));
  return group;
}

export async function createGroup(
  ctx: DashboardsContext,
  auth: Auth,
  input: GroupInput,
  bag: ErrorBag,
): Promise<DashboardGroup> {
  const organizationId = auth.organizationId;
  if (!organizationId) throw conflict(NO_ORGANIZATION);
  if (input.name === undefined && !bag.has('name')) bag.add('name', 'is required');
  bag.throwIfAny();
  const now = ctx.now();
  const group: DashboardGroup = {
    id: newId(),
    organizationId,
    name: input.name!,
    position: input.position ?? 0, // without one: last + 1, in the insert's transaction
    insertedAt: now,
    updatedAt: now,
    updatedBy: auth.userId,
  };
  return ctx.dashboards.insertGroup(group, input.position === undefined);
}

/**
 * PUT: findGroup's version check, then the fields sent; the save is conditioned on the version
 * read and runs again on the new one when another save came in between (as saveDashboard).
 */
export async function saveGroup(
  ctx: DashboardsContext,
  auth: Auth,
  rawId: string,
  input: GroupInput,
  bag: ErrorBag,
  userId: string | null = null,
  expected: ExpectedVersion = {},
): Promise<DashboardGroup> {
  for (let attempt = 1; ; attempt++) {
    const current = await findGroup(ctx, auth, rawId, expected);
    bag.throwIfAny();
    const next: DashboardGroup = {
      ...current,
      name: input.name ?? current.name,
      position: input.position ?? current.position,
      updatedAt: nextUpdatedAt(current, ctx.now()),
      updatedBy: userId,
    };
    if (await ctx.dashboards.updateGroup(next, current.updatedAt)) return next;
    if (attempt === 5) throw conflict('The dashboard group changed while it was being saved: retry');
  }
}

/** Deletes the group (its dashboards stay, with group_id null) and returns it as it was. */
export async function removeGroup(ctx: DashboardsContext, group: DashboardGroup): Promise<DashboardGroup> {
  await ctx.dashboards.removeGroup(group.id, group.organizationId, ctx.now());
  return group;
}
