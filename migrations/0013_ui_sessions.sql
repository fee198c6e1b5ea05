-- Web UI sessions. The cookie holds a random session id; only its SHA-256 is stored, with the
-- SHA-256 of the API token it stands for (the same hash `tokens.token_hash` holds), so every UI request
-- re-authenticates through that token: a revoked, deleted or expired token ends its sessions at once.
CREATE TABLE ui_sessions (
  id_hash TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX ui_sessions_expires ON ui_sessions(expires_at);
