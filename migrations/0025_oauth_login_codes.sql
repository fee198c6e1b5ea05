-- One-time authorization codes of `terraform login` (login.v1: OAuth 2.0 authorization code with PKCE). Only the
-- code's SHA-256 is stored, with what the token endpoint must check: the user who approved, the client, the exact
-- redirect URI and the PKCE challenge. A code is deleted when exchanged (DELETE ... RETURNING: it works once, even
-- when two exchanges race) and is refused after `expires_at`; expired rows go whenever a new code is issued.
CREATE TABLE oauth_login_codes (
  code_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX oauth_login_codes_expires ON oauth_login_codes(expires_at);
