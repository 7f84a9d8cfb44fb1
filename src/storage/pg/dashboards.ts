// The dashboards repository on PostgreSQL (cluster mode): the same methods and rows as
// ../dashboards.ts, in PostgreSQL's dialect.
//
// SQLite's IMMEDIATE transactions serialised every unit; here each unit locks what its check reads:
// - a position at the end (last + 1) is read under the organization's row lock (FOR NO KEY
//   UPDATE: it serialises the organization's inserts at the end, not the foreign-key checks of
//   other tables' inserts, which take FOR KEY SHARE), so concurrent inserts get distinct places;
// - a dashboard's source and group are read FOR KEY SHARE before it is written, so neither can be
//   deleted before the commit (a delete waits, then finds the new row: a group's removal ungroups
//   it, a source's removal cascades to it);
// - a version check is a conditioned statement or reads the row FOR NO KEY UPDATE, so of two
//   writers at one version the second sees the first's new `updated_at` and writes nothing.
// Locks are taken parents first (organization, source, group, then dashboards), as removeGroup
// and the foreign keys' cascades take them, so the units do not deadlock one another.
//
// Order: SQLite breaks a tie of position and inserted_at by rowid (insertion order). PostgreSQL
// keeps no insertion order, so the last tie-breaker here is the id (byte order): two rows at the
// same position inserted in the same millisecond may list in another order than on SQLite.
import type { PgStore, Sql } from './client';
import {
  groupRow,
  toDashboard,
  toGroup,
  toRow,
  type DashboardRow,
  type DashboardsRepo,
  type GroupRow,
} from '../dashboards';
import type { Dashboard, DashboardGroup } from '../../model/dashboard';

const ORDER = 'ORDER BY position, inserted_at, id COLLATE "C"';

const DASHBOARD_COLUMNS = [
  'id',
  'organization_id',
  'user_id',
  'source_type',
  'source_id',
  'database_id',
  'group_id',
  'name',
  'key',
  'visibility',
  'locked',
  'position',
  'default_timeframe',
  'default_granularity',
  'payload',
  'segments',
  'inserted_at',
  'updated_at',
  'updated_by',
] as const satisfies readonly (keyof DashboardRow)[];

const GROUP_COLUMNS = [
  'id',
  'organization_id',
  'name',
  'position',
  'inserted_at',
  'updated_at',
  'updated_by',
] as const satisfies readonly (keyof GroupRow)[];

const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(', ');

const INSERT_DASHBOARD = `INSERT INTO dashboards (${DASHBOARD_COLUMNS.join(', ')})
  VALUES (${placeholders(DASHBOARD_COLUMNS.length)})`;
const INSERT_GROUP = `INSERT INTO dashboard_groups (${GROUP_COLUMNS.join(', ')})
  VALUES (${placeholders(GROUP_COLUMNS.length)})`;

/** The columns a save changes (SQLite's: not id, organization_id, user_id, inserted_at), from $3 on; the row is $1, $2. */
const DASHBOARD_SET = DASHBOARD_COLUMNS.filter(
  (c) => c !== 'id' && c !== 'organization_id' && c !== 'inserted_at' && c !== 'user_id',
);
const UPDATE_DASHBOARD = `UPDATE dashboards SET ${DASHBOARD_SET.map((c, i) => `${c} = $${i + 3}`).join(', ')}
  WHERE id = $1 AND organization_id = $2`;
const GROUP_SET = [
  'name',
  'position',
  'updated_at',
  'updated_by',
] as const satisfies readonly (keyof GroupRow)[];
/** A group saved only while its stored version is still $7. */
const UPDATE_GROUP = `UPDATE dashboard_groups SET ${GROUP_SET.map((c, i) => `${c} = $${i + 3}`).join(', ')}
  WHERE id = $1 AND organization_id = $2 AND updated_at = $${GROUP_SET.length + 3}`;

const valuesOf = <R, K extends keyof R>(row: R, columns: readonly K[]): unknown[] =>
  columns.map((c) => row[c]);

/**
 * One page of visible dashboards, cut where the SQLite repository stops reading. The running total
 * counts characters (never more than the UTF-16 length the cut is decided on), so every row the
 * cut can keep is returned, with at most one more; rows past that are neither read nor sent.
 */
const LIST_VISIBLE = `SELECT ${DASHBOARD_COLUMNS.join(', ')} FROM (
    SELECT sized.*, row_number() OVER w AS n, SUM(chars) OVER w - chars AS chars_before
    FROM (
      SELECT page.*, length(payload) + length(segments) AS chars FROM (
        SELECT * FROM dashboards WHERE organization_id = $1 AND visibility = 1 ${ORDER} LIMIT $2 OFFSET $3
      ) page
    ) sized
    WINDOW w AS (${ORDER} ROWS UNBOUNDED PRECEDING)
  ) counted
  WHERE n = 1 OR chars_before <= $4 ${ORDER}`;

export function createPgDashboardsRepo(store: PgStore): DashboardsRepo {
  /** Locks the organization's row against other inserts at its end (FOR NO KEY UPDATE). */
  const lockOrganization = (sql: Sql, organizationId: string) =>
    sql.one('SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);

  /** The dashboard's source and group (when it has one) are there, locked against deletion. */
  async function parentsThere(sql: Sql, dashboard: Dashboard): Promise<boolean> {
    const source = await sql.one(
      'SELECT 1 FROM sources WHERE id = $1 AND organization_id = $2 FOR KEY SHARE',
      [dashboard.sourceId, dashboard.organizationId],
    );
    if (!source) return false;
    if (dashboard.groupId === null) return true;
    const group = await sql.one(
      'SELECT 1 FROM dashboard_groups WHERE id = $1 AND organization_id = $2 FOR KEY SHARE',
      [dashboard.groupId, dashboard.organizationId],
    );
    return group !== undefined;
  }

  const lastPosition = async (sql: Sql, table: 'dashboards' | 'dashboard_groups', organizationId: string) =>
    (
      await sql.one<{ last: number | null }>(
        `SELECT MAX(position) AS last FROM ${table} WHERE organization_id = $1`,
        [organizationId],
      )
    )?.last ?? 0;

  return {
    insert: (dashboard: Dashboard, atEnd: boolean): Promise<Dashboard | undefined> =>
      store.tx(async (sql) => {
        if (atEnd) await lockOrganization(sql, dashboard.organizationId);
        if (!(await parentsThere(sql, dashboard))) return undefined;
        const placed = atEnd
          ? { ...dashboard, position: (await lastPosition(sql, 'dashboards', dashboard.organizationId)) + 1 }
          : dashboard;
        await sql.run(INSERT_DASHBOARD, valuesOf(toRow(placed), DASHBOARD_COLUMNS));
        return placed;
      }),

    update: (dashboard: Dashboard, fromUpdatedAt: number): Promise<boolean> =>
      store.tx(async (sql) => {
        if (!(await parentsThere(sql, dashboard))) return false;
        const stored = await sql.one<{ updated_at: number }>(
          'SELECT updated_at FROM dashboards WHERE id = $1 AND organization_id = $2 FOR NO KEY UPDATE',
          [dashboard.id, dashboard.organizationId],
        );
        if (!stored || stored.updated_at !== fromUpdatedAt) return false;
        const row = toRow(dashboard);
        await sql.run(UPDATE_DASHBOARD, [row.id, row.organization_id, ...valuesOf(row, DASHBOARD_SET)]);
        return true;
      }),

    async byId(id: string, organizationId: string): Promise<Dashboard | undefined> {
      const row = await store.one<DashboardRow>(
        'SELECT * FROM dashboards WHERE id = $1 AND organization_id = $2',
        [id, organizationId],
      );
      return row ? toDashboard(row) : undefined;
    },

    async listVisible(
      organizationId: string,
      limit: number,
      offset: number,
      maxBytes: number,
    ): Promise<Dashboard[]> {
      const rows = await store.rows<DashboardRow>(LIST_VISIBLE, [organizationId, limit, offset, maxBytes]);
      const page: Dashboard[] = [];
      let bytes = 0;
      for (const row of rows) {
        bytes += row.payload.length + row.segments.length;
        if (page.length > 0 && bytes > maxBytes) break;
        page.push(toDashboard(row));
      }
      return page;
    },

    countVisible: async (organizationId: string): Promise<number> =>
      (
        await store.one<{ n: number }>(
          'SELECT COUNT(*) AS n FROM dashboards WHERE organization_id = $1 AND visibility = 1',
          [organizationId],
        )
      )?.n ?? 0,

    /** One conditioned statement: a concurrent save changes updated_at, and this one then deletes nothing. */
    remove: async (id: string, organizationId: string, fromUpdatedAt: number): Promise<boolean> =>
      (await store.run('DELETE FROM dashboards WHERE id = $1 AND organization_id = $2 AND updated_at = $3', [
        id,
        organizationId,
        fromUpdatedAt,
      ])) > 0,

    insertGroup: (group: DashboardGroup, atEnd: boolean): Promise<DashboardGroup> =>
      store.tx(async (sql) => {
        let placed = group;
        if (atEnd) {
          await lockOrganization(sql, group.organizationId);
          placed = {
            ...group,
            position: (await lastPosition(sql, 'dashboard_groups', group.organizationId)) + 1,
          };
        }
        await sql.run(INSERT_GROUP, valuesOf(groupRow(placed), GROUP_COLUMNS));
        return placed;
      }),

    updateGroup: async (group: DashboardGroup, fromUpdatedAt: number): Promise<boolean> => {
      const row = groupRow(group);
      return (
        (await store.run(UPDATE_GROUP, [
          row.id,
          row.organization_id,
          ...valuesOf(row, GROUP_SET),
          fromUpdatedAt,
        ])) > 0
      );
    },

    async groupById(id: string, organizationId: string): Promise<DashboardGroup | undefined> {
      const row = await store.one<GroupRow>(
        'SELECT * FROM dashboard_groups WHERE id = $1 AND organization_id = $2',
        [id, organizationId],
      );
      return row ? toGroup(row) : undefined;
    },

    listGroups: async (organizationId: string, limit: number, offset: number): Promise<DashboardGroup[]> =>
      (
        await store.rows<GroupRow>(
          `SELECT * FROM dashboard_groups WHERE organization_id = $1 ${ORDER} LIMIT $2 OFFSET $3`,
          [organizationId, limit, offset],
        )
      ).map(toGroup),

    countGroups: async (organizationId: string): Promise<number> =>
      (
        await store.one<{ n: number }>(
          'SELECT COUNT(*) AS n FROM dashboard_groups WHERE organization_id = $1',
          [organizationId],
        )
      )?.n ?? 0,

    /**
     * The group locked first (FOR UPDATE: an insert or save into it waits, then finds it gone), its
     * dashboards ungrouped and marked as updated at `now`, then the group deleted.
     */
    async removeGroup(id: string, organizationId: string, now: number): Promise<void> {
      await store.tx(async (sql) => {
        await sql.one('SELECT 1 FROM dashboard_groups WHERE id = $1 AND organization_id = $2 FOR UPDATE', [
          id,
          organizationId,
        ]);
        await sql.run(
          'UPDATE dashboards SET group_id = NULL, updated_at = $1 WHERE group_id = $2 AND organization_id = $3',
          [now, id, organizationId],
        );
        await sql.run('DELETE FROM dashboard_groups WHERE id = $1 AND organization_id = $2', [
          id,
          organizationId,
        ]);
      });
    },
  };
}
