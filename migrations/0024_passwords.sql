-- People sign in as themselves. A user's password is kept as one self-describing hash
-- (`pbkdf2-sha256$<iterations>$<salt>$<hash>`), so the iteration count can be raised later.
ALTER TABLE users ADD COLUMN password_hash TEXT;

-- A UI session now stands either for an API token (token_hash, as before) or for a user signed in with a
-- password (user_id): the table is rebuilt because token_hash can no longer be NOT NULL.
CREATE TABLE ui_sessions_next (
  id_hash TEXT PRIMARY KEY,
  token_hash TEXT,
  user_id TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  CHECK ((token_hash IS NULL) <> (user_id IS NULL))
);
INSERT INTO ui_sessions_next (id_hash, token_hash, created_at, expires_at) SELECT id_hash, token_hash, created_at, expires_at FROM ui_sessions;
DROP TABLE ui_sessions;
ALTER TABLE ui_sessions_next RENAME TO ui_sessions;
CREATE INDEX ui_sessions_expires ON ui_sessions(expires_at);
CREATE INDEX ui_sessions_user ON ui_sessions(user_id) WHERE user_id IS NOT NULL;

-- One-time links that set a password: an invitation's (it also accepts the invitation) or a site admin's reset
-- link. Only the SHA-256 of the link's secret is kept; a link works once, until it expires.
CREATE TABLE password_links (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,          -- 'invitation' | 'reset'
  membership_id TEXT,          -- invitation links
  created_by TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT                 -- kept until it expires, so a second use is told the link was used
);
CREATE INDEX password_links_user ON password_links(user_id);
CREATE INDEX password_links_membership ON password_links(membership_id) WHERE membership_id IS NOT NULL;
CREATE INDEX password_links_expires ON password_links(expires_at);

-- Failed password sign-ins, per account (`user:<id>`, or `login:<name>` for an unknown one) and per client address
-- (`ip:<address>`): what the lock-out counts. Rows older than the counting window are pruned as new ones arrive.
CREATE TABLE sign_in_failures (
  key TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX sign_in_failures_key ON sign_in_failures(key, at);
CREATE INDEX sign_in_failures_at ON sign_in_failures(at);
