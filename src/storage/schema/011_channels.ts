// Alert channels (SPEC 13): where an organization's notifications go. One row per channel, scoped
// to one organization. `settings` is the channel's JSON without secrets; `secrets` is a JSON object
// of the secret fields (webhook URLs, tokens), each value encrypted with the secret box
// (lib/secrets.ts, `enc:v1:...`), never stored in plaintext.
export const CHANNELS_SCHEMA = `
CREATE TABLE channels (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('webhook', 'ntfy', 'gotify', 'email')),
  preset TEXT CHECK (preset IS NULL OR preset IN ('slack', 'discord', 'mattermost', 'teams')),
  settings TEXT NOT NULL,
  secrets TEXT NOT NULL,
  inserted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX channels_by_organization ON channels (organization_id, inserted_at);
`;
