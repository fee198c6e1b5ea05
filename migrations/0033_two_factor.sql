-- Two-factor authentication (TOTP, RFC 6238). A user's authenticator: its secret sealed at rest as variables' values
-- are (AES-256-GCM under VARIABLES_ENCRYPTION_KEY, the user bound as associated data), confirmed once one code
-- matched (NULL: enrolment pending, sign-in does not ask for a code yet). `last_step`: the newest accepted time step,
-- so that a code is accepted once.
CREATE TABLE two_factor (
  user_id TEXT PRIMARY KEY,
  secret_sealed TEXT NOT NULL,
  confirmed_at TEXT,
  last_step INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);

-- Recovery codes, shown once when an authenticator is confirmed: only their SHA-256 is kept; each works once.
CREATE TABLE two_factor_recovery_codes (
  user_id TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  used_at TEXT,
  PRIMARY KEY (user_id, code_hash)
);

-- The second step of a password sign-in: the password was right, a code is still owed. Only the SHA-256 of the
-- browser's challenge cookie is kept. `failure_key`: the budget the code's failures count against (the known
-- browser's own, else the account's, with the client address beside it when `address_key` is set).
CREATE TABLE sign_in_challenges (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  failure_key TEXT NOT NULL,
  address_key TEXT,
  next TEXT,
  expires_at TEXT NOT NULL
);
CREATE INDEX sign_in_challenges_expires ON sign_in_challenges(expires_at);
