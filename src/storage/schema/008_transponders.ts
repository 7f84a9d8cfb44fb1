// Transponders (SPEC 15): derived values computed on every read of a source's metric keys. One row
// per transponder, scoped to one source; `paths` is a JSON array of dot paths bound to a..z.
export const TRANSPONDERS_SCHEMA = `
CREATE TABLE transponders (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  source_type TEXT NOT NULL CHECK (source_type IN ('project', 'database')),
  source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  paths TEXT NOT NULL,
  expression TEXT NOT NULL,
  response TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  position INTEGER NOT NULL,
  inserted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX transponders_by_source ON transponders (source_id, position);
`;
