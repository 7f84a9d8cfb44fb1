// The web interface's sessions (docs/interface.md): the cookie's value is a session credential of
// its own (`svc_ses_` + 43 characters), never an API token; only its SHA-256 hash is stored, with
// when it was made and last used, so that the server ends it after an idle time and a lifetime.
// The API tokens that earlier sign-ins minted for the cookie (named "Web session") are deleted:
// a copied cookie of an older version must not stay a long-lived API credential. Whoever was
// signed in signs in again.
export const SESSIONS_SCHEMA = `
CREATE TABLE web_sessions (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  user_agent TEXT,
  address TEXT,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
);
CREATE INDEX web_sessions_user ON web_sessions(user_id, created_at);
DELETE FROM user_tokens WHERE name = 'Web session';
`;
