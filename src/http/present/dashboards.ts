// The JSON shapes of dashboards (seed section 2.3: every field, always present) and groups.
import { formatTimestamp } from '../../shared/time';
import type { Dashboard, DashboardGroup } from '../../model/dashboard';

export function presentDashboard(d: Dashboard) {
  return {
    id: d.id,
    name: d.name,
    key: d.key,
    visibility: d.visibility,
    locked: d.locked,
    source_type: d.sourceType,
    source_id: d.sourceId,
    organization_id: d.organizationId,
    user_id: d.userId,
    database_id: d.databaseId,
    group_id: d.groupId,
    position: d.position,
    default_timeframe: d.defaultTimeframe,
    default_granularity: d.defaultGranularity,
    payload: d.payload,
    segments: d.segments,
    inserted_at: formatTimestamp(d.insertedAt),
    updated_at: formatTimestamp(d.updatedAt),
  };
}

export function presentGroup(g: DashboardGroup) {
  return {
    id: g.id,
    name: g.name,
    position: g.position,
    organization_id: g.organizationId,
    inserted_at: formatTimestamp(g.insertedAt),
    updated_at: formatTimestamp(g.updatedAt),
  };
}
