// Dashboards and dashboard groups: prepared statements only. Every read is scoped to an
// organization, so a caller can never reach another organization's rows by id.
import type { Db } from './db';
import type { Dashboard, DashboardGroup } from '../model/dashboard';
import type { SourceType } from '../model/source';

interface DashboardRow {
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

interface GroupRow {
  id: string;
  organization_id: string;
  name: string;
  position: number;
  inserted_at: number;
  updated_at: number;
  updated_by: string | null;
}

function toDashboard(r: DashboardRow): Dashboard {
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

function toRow(d: Dashboard): DashboardRow {
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

const toGroup = (r: GroupRow): DashboardGroup => ({
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
  return {
    /** Runs fn in one IMMEDIATE transaction (position = last + 1 and the insert stay together). */
    transaction: <T>(fn: () => T): T => db.transaction(fn).immediate(),

    insert: (dashboard: Dashboard) => void d.insert.run(toRow(dashboard)),
    update: (dashboard: Dashboard) => void d.update.run(toRow(dashboard)),
    /** Any dashboard of the organization, hidden ones included. */
    byId(id: string, organizationId: string): Dashboard | undefined {
      const row = d.byId.get(id, organizationId);
      return row ? toDashboard(row) : undefined;
    },
    /**
     * One page of visible dashboards. It stops early, after at least one, once the stored documents
     * of the page would pass `maxBytes`, so no list is built without bound.
     */
    listVisible(organizationId: string, limit: number, offset: number, maxBytes: number): Dashboard[] {
      const page: Dashboard[] = [];
      let bytes = 0;
      for (const row of d.listVisible.iterate(organizationId, limit, offset)) {
        bytes += row.payload.length + row.segments.length;
        if (page.length > 0 && bytes > maxBytes) break;
        page.push(toDashboard(row));
      }
      return page;
    },
    countVisible: (organizationId: string): number => d.countVisible.pluck().get(organizationId) ?? 0,
    /** The highest position in use (hidden dashboards included), or null when there is none. */
    lastPosition: (organizationId: string): number | null => d.lastPosition.get(organizationId)?.last ?? null,
    remove: (id: string, organizationId: string) => void d.remove.run(id, organizationId),

    insertGroup: (group: DashboardGroup) => void g.insert.run(groupRow(group)),
    updateGroup: (group: DashboardGroup) => void g.update.run(groupRow(group)),
    groupById(id: string, organizationId: string): DashboardGroup | undefined {
      const row = g.byId.get(id, organizationId);
      return row ? toGroup(row) : undefined;
    },
    listGroups: (organizationId: string, limit: number, offset: number): DashboardGroup[] =>
      g.list.all(organizationId, limit, offset).map(toGroup),
    countGroups: (organizationId: string): number => g.count.pluck().get(organizationId) ?? 0,
    lastGroupPosition: (organizationId: string): number | null =>
      g.lastPosition.get(organizationId)?.last ?? null,
    /** Deletes a group; its dashboards stay, ungrouped (and marked as updated at `now`). */
    removeGroup(id: string, organizationId: string, now: number): void {
      db.transaction(() => {
        d.ungroup.run(now, id, organizationId);
        g.remove.run(id, organizationId);
      }).immediate();
    },
  };
}

function groupRow(group: DashboardGroup): GroupRow {
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
