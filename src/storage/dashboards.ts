// Dashboards and dashboard groups: prepared statements only. Every read is scoped to an
// organization, so a caller can never reach another organization's rows by id.
import type { Db } from './db';
import type { Dashboard, DashboardGroup } from '../model/dashboard';
import type { SourceType } from '../model/source';

export interface DashboardRow {
  id: string;
  organization_id: string;
  user_id: string;
  source_type: SourceType;
  source_id: string;
  database_id: string | null;
  group_id: string | null;
  name: string;
  key: string;
  visibility: number;
  locked: number;
  position: number;
  default_timeframe: string;
  default_granularity: string;
  payload: string;
  segments: string;
  inserted_at: number;
  updated_at: number;
  updated_by: string | null;
}

export interface GroupRow {
  id: string;
  organization_id: string;
  name: string;
  position: number;
  inserted_at: number;
  updated_at: number;
  updated_by: string | null;
}

export function toDashboard(r: DashboardRow): Dashboard {
  return {
    id: r.id,
    organizationId: r.organization_id,
    userId: r.user_id,
    sourceType: r.source_type,
    sourceId: r.source_id,
    databaseId: r.database_id,
    groupId: r.group_id,
    name: r.name,
    key: r.key,
    visibility: r.visibility === 1,
    locked: r.locked === 1,
    position: r.position,
    defaultTimeframe: r.default_timeframe,
    defaultGranularity: r.default_granularity,
    payload: JSON.parse(r.payload) as Record<string, unknown>,
    segments: JSON.parse(r.segments) as unknown[],
    insertedAt: r.inserted_at,
    updatedAt: r.updated_at,
    updatedBy: r.updated_by ?? null,
  };
}

export function toRow(d: Dashboard): DashboardRow {
  return {
    id: d.id,
    organization_id: d.organizationId,
    user_id: d.userId,
    source_type: d.sourceType,
    source_id: d.sourceId,
    database_id: d.databaseId,
    group_id: d.groupId,
    name: d.name,
    key: d.key,
    visibility: d.visibility ? 1 : 0,
    locked: d.locked ? 1 : 0,
    position: d.position,
    default_timeframe: d.defaultTimeframe,
    default_granularity: d.defaultGranularity,
    payload: JSON.stringify(d.payload),
    segments: JSON.stringify(d.segments),
    inserted_at: d.insertedAt,
    updated_at: d.updatedAt,
    updated_by: d.updatedBy ?? null,
  };
}

export const toGroup = (r: GroupRow): DashboardGroup => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  position: r.position,
  insertedAt: r.inserted_at,
  updatedAt: r.updated_at,
  updatedBy: r.updated_by ?? null,
});

// Creation order breaks ties between equal positions: inserted_at, then rowid (same millisecond).
const ORDER = 'ORDER BY position, inserted_at, rowid';

function dashboardStatements(db: Db) {
  return {
    insert: db.prepare<DashboardRow>(
      `INSERT INTO dashboards (id, organization_id, user_id, source_type, source_id, database_id, group_id, name, key,
        visibility, locked, position, default_timeframe, default_granularity, payload, segments, inserted_at, updated_at, updated_by)
       VALUES (@id, @organization_id, @user_id, @source_type, @source_id, @database_id, @group_id, @name, @key,
        @visibility, @locked, @position, @default_timeframe, @default_granularity, @payload, @segments, @inserted_at, @updated_at, @updated_by)`,
    ),
    update: db.prepare<DashboardRow>(
      `UPDATE dashboards SET source_type = @source_type, source_id = @source_id, database_id = @database_id,
        group_id = @group_id, name = @name, key = @key, visibility = @visibility, locked = @locked, position = @position,
        default_timeframe = @default_timeframe, default_granularity = @default_granularity, payload = @payload,
        segments = @segments, updated_at = @updated_at, updated_by = @updated_by
       WHERE id = @id AND organization_id = @organization_id`,
    ),
    byId: db.prepare<[string, string], DashboardRow>(
      'SELECT * FROM dashboards WHERE id = ? AND organization_id = ?',
    ),
    listVisible: db.prepare<[string, number, number], DashboardRow>(
      `SELECT * FROM dashboards WHERE organization_id = ? AND visibility = 1 ${ORDER} LIMIT ? OFFSET ?`,
    ),
    countVisible: db.prepare<[string], number>(
      'SELECT COUNT(*) FROM dashboards WHERE organization_id = ? AND visibility = 1',
    ),
    lastPosition: db.prepare<[string], { last: number | null }>(
      'SELECT MAX(position) AS last FROM dashboards WHERE organization_id = ?',
    ),
    remove: db.prepare<[string, string]>('DELETE FROM dashboards WHERE id = ? AND organization_id = ?'),
    ungroup: db.prepare<[number, string, string]>(
      'UPDATE dashboards SET group_id = NULL, updated_at = ? WHERE group_id = ? AND organization_id = ?',
    ),
  };
}

function groupStatements(db: Db) {
  return {
    insert: db.prepare<GroupRow>(
      `INSERT INTO dashboard_groups (id, organization_id, name, position, inserted_at, updated_at, updated_by)
       VALUES (@id, @organization_id, @name, @position, @inserted_at, @updated_at, @updated_by)`,
    ),
    update: db.prepare<GroupRow>(
      `UPDATE dashboard_groups SET name = @name, position = @position, updated_at = @updated_at, updated_by = @updated_by
       WHERE id = @id AND organization_id = @organization_id`,
    ),
    byId: db.prepare<[string, string], GroupRow>(
      'SELECT * FROM dashboard_groups WHERE id = ? AND organization_id = ?',
    ),
    list: db.prepare<[string, number, number], GroupRow>(
      `SELECT * FROM dashboard_groups WHERE organization_id = ? ${ORDER} LIMIT ? OFFSET ?`,
    ),
    count: db.prepare<[string], number>('SELECT COUNT(*) FROM dashboard_groups WHERE organization_id = ?'),
    lastPosition: db.prepare<[string], { last: number | null }>(
      'SELECT MAX(position) AS last FROM dashboard_groups WHERE organization_id = ?',
    ),
    remove: db.prepare<[string, string]>('DELETE FROM dashboard_groups WHERE id = ? AND organization_id = ?'),
  };
}

export function createDashboardsRepo(db: Db) {
  const d = dashboardStatements(db);
  const g = groupStatements(db);
  /** One IMMEDIATE transaction: what it reads still holds when it writes. */
  const atomically = <T>(fn: () => T): T => db.transaction(fn).immediate();
  const sourceThere = db.prepare<[string, string], number>(
    'SELECT 1 FROM sources WHERE id = ? AND organization_id = ?',
  );
  /** What a dashboard row points at is still there (its source, its group when it has one). */
  const parentsThere = (dashboard: Dashboard): boolean =>
    sourceThere.get(dashboard.sourceId, dashboard.organizationId) !== undefined &&
    (dashboard.groupId === null || g.byId.get(dashboard.groupId, dashboard.organizationId) !== undefined);
  return {
    /**
     * Atomic: inserts the dashboard while its source and group (checked by the caller) are still
     * there; `atEnd` places it at last + 1 (hidden dashboards count) in the same transaction.
     * Undefined when a parent is gone (the caller checks again and answers for it).
     */
    insert: async (dashboard: Dashboard, atEnd: boolean): Promise<Dashboard | undefined> =>
      atomically(() => {
        if (!parentsThere(dashboard)) return undefined;
        const placed = atEnd
          ? { ...dashboard, position: (d.lastPosition.get(dashboard.organizationId)?.last ?? 0) + 1 }
          : dashboard;
        d.insert.run(toRow(placed));
        return placed;
      }),
    /**
     * Atomic: saves the dashboard only while the stored version is still `fromUpdatedAt` (the one
     * the caller's checks read; every save changes it) and its source and group are there. False
     * otherwise: the caller reads it again and checks again.
     */
    update: async (dashboard: Dashboard, fromUpdatedAt: number): Promise<boolean> =>
      atomically(() => {
        const stored = d.byId.get(dashboard.id, dashboard.organizationId);
        if (!stored || stored.updated_at !== fromUpdatedAt || !parentsThere(dashboard)) return false;
        d.update.run(toRow(dashboard));
        return true;
      }),
    /** Any dashboard of the organization, hidden ones included. */
    async byId(id: string, organizationId: string): Promise<Dashboard | undefined> {
      const row = d.byId.get(id, organizationId);
      return row ? toDashboard(row) : undefined;
    },
    /**
     * One page of visible dashboards. It stops early, after at least one, once the stored documents
     * of the page would pass `maxBytes`, so no list is built without bound.
     */
    async listVisible(
      organizationId: string,
      limit: number,
      offset: number,
      maxBytes: number,
    ): Promise<Dashboard[]> {
      const page: Dashboard[] = [];
      let bytes = 0;
      for (const row of d.listVisible.iterate(organizationId, limit, offset)) {
        bytes += row.payload.length + row.segments.length;
        if (page.length > 0 && bytes > maxBytes) break;
        page.push(toDashboard(row));
      }
      return page;
    },
    countVisible: async (organizationId: string): Promise<number> =>
      d.countVisible.pluck().get(organizationId) ?? 0,
    /** Atomic like update: deletes only while the stored version is still `fromUpdatedAt`. */
    remove: async (id: string, organizationId: string, fromUpdatedAt: number): Promise<boolean> =>
      atomically(() => {
        if (d.byId.get(id, organizationId)?.updated_at !== fromUpdatedAt) return false;
        d.remove.run(id, organizationId);
        return true;
      }),

    /** Atomic: inserts the group; without a position, at last + 1 in the same transaction. */
    insertGroup: async (group: DashboardGroup, atEnd: boolean): Promise<DashboardGroup> =>
      atomically(() => {
        const placed = atEnd
          ? { ...group, position: (g.lastPosition.get(group.organizationId)?.last ?? 0) + 1 }
          : group;
        g.insert.run(groupRow(placed));
        return placed;
      }),
    /** Atomic like update: saves only while the stored version is still `fromUpdatedAt`. */
    updateGroup: async (group: DashboardGroup, fromUpdatedAt: number): Promise<boolean> =>
      atomically(() => {
        if (g.byId.get(group.id, group.organizationId)?.updated_at !== fromUpdatedAt) return false;
        g.update.run(groupRow(group));
        return true;
      }),
    async groupById(id: string, organizationId: string): Promise<DashboardGroup | undefined> {
      const row = g.byId.get(id, organizationId);
      return row ? toGroup(row) : undefined;
    },
    listGroups: async (organizationId: string, limit: number, offset: number): Promise<DashboardGroup[]> =>
      g.list.all(organizationId, limit, offset).map(toGroup),
    countGroups: async (organizationId: string): Promise<number> => g.count.pluck().get(organizationId) ?? 0,
    /** Deletes a group; its dashboards stay, ungrouped (and marked as updated at `now`). */
    async removeGroup(id: string, organizationId: string, now: number): Promise<void> {
      atomically(() => {
        d.ungroup.run(now, id, organizationId);
        g.remove.run(id, organizationId);
      });
    },
  };
}

export function groupRow(group: DashboardGroup): GroupRow {
  return {
    id: group.id,
    organization_id: group.organizationId,
    name: group.name,
    position: group.position,
    inserted_at: group.insertedAt,
    updated_at: group.updatedAt,
    updated_by: group.updatedBy ?? null,
  };
}

export type DashboardsRepo = ReturnType<typeof createDashboardsRepo>;
