-- Single sign-on with the operator's OpenID Connect provider (src/sso/).
-- A person's identity at a provider, keyed by the ID token's (iss, sub) and never by e-mail or name (OpenID Connect
-- Core §5.7: only that pair is stable and unique). Created at the first SSO sign-in, with the user it signs in.
CREATE TABLE sso_identities (
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  user_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_sign_in_at TEXT NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX sso_identities_user ON sso_identities(user_id);

-- A sign-in under way: the browser holds a random id in a short-lived cookie, only its SHA-256 is kept here with the
-- authorization request's state, PKCE verifier and nonce, and the page to return to. Used once, at the callback.
CREATE TABLE sso_requests (
  id_hash TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  nonce TEXT NOT NULL,
  next TEXT,
  expires_at TEXT NOT NULL
);
CREATE INDEX sso_requests_expires ON sso_requests(expires_at);

-- How a web UI session was started: 'password' (a password or a password link), 'sso', or NULL (a pasted token).
-- An organisation that requires SSO (`sso-required`) refuses its members' password sessions.
ALTER TABLE ui_sessions ADD COLUMN method TEXT;
