// Who last changed a dashboard or a dashboard group (a user id, null for rows written before this
// version or by a source token), so that a save refused as stale can say who changed it and when.
export const DASHBOARD_EDITORS_SCHEMA = `
ALTER TABLE dashboards ADD COLUMN updated_by TEXT;
ALTER TABLE dashboard_groups ADD COLUMN updated_by TEXT;
`;
