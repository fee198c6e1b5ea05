-- Whether an account's holder proved control of its address, and how (NULL: not proven). An address an inviter typed
-- proves nothing: an invitation names the account that proved the address, or a new account of its own.
--   'site-admin': created by a site admin (POST /admin/users), or an address change a site admin confirmed (or made
--                 for itself); site admins themselves count as proven (the bootstrap admin's is the operator's).
--   'upgrade':    an account this migration found in use otherwise (see below).
-- (Single sign-on will record 'sso'.)
ALTER TABLE users ADD COLUMN email_proof TEXT;

-- Existing accounts keep their standing, except those an inviter may have claimed: accounts no one uses yet (no
-- password, token or active membership, not a site admin), and accounts whose password an invitation's link set.
UPDATE users SET email_proof = 'upgrade'
  WHERE is_service_account = 0 AND email IS NOT NULL
    AND (is_site_admin = 1 OR password_hash IS NOT NULL OR EXISTS (SELECT 1 FROM tokens k WHERE k.user_id = users.id)
         OR EXISTS (SELECT 1 FROM organization_memberships m WHERE m.user_id = users.id AND m.status = 'active'))
    AND NOT EXISTS (SELECT 1 FROM password_links l WHERE l.user_id = users.id AND l.kind = 'invitation' AND l.used_at IS NOT NULL);

-- The invitation an account was created for, when no account had proven the invited address: the one invitation
-- its holder may accept without proving the address. An unproven account of earlier invitations (which several
-- organisations could share) keeps its oldest: the others it names need an invitation of their own.
ALTER TABLE users ADD COLUMN created_for_invitation TEXT;
UPDATE users SET created_for_invitation = (SELECT m.id FROM organization_memberships m WHERE m.user_id = users.id AND m.invited_email IS NOT NULL
    ORDER BY m.created_at, m.id LIMIT 1)
  WHERE email_proof IS NULL AND is_service_account = 0;

-- The token a link's maker used (NULL: a password session, or the operator's ADMIN_TOKEN), so that using the link can
-- check its maker still may make it.
ALTER TABLE password_links ADD COLUMN created_by_token TEXT;

-- An invitation's link is for an account no one uses yet: the moment the account is used otherwise (a token, a
-- membership, site admin, a proven address), its unused invitation links die for good, whatever happens later.
CREATE TRIGGER password_links_die_on_token AFTER INSERT ON tokens WHEN NEW.user_id IS NOT NULL BEGIN
  DELETE FROM password_links WHERE user_id = NEW.user_id AND kind = 'invitation' AND used_at IS NULL;
END;
CREATE TRIGGER password_links_die_on_membership AFTER INSERT ON organization_memberships WHEN NEW.status = 'active' BEGIN
  DELETE FROM password_links WHERE user_id = NEW.user_id AND kind = 'invitation' AND used_at IS NULL;
END;
CREATE TRIGGER password_links_die_on_acceptance AFTER UPDATE OF status ON organization_memberships WHEN NEW.status = 'active' BEGIN
  DELETE FROM password_links WHERE user_id = NEW.user_id AND kind = 'invitation' AND used_at IS NULL;
END;
CREATE TRIGGER password_links_die_on_standing AFTER UPDATE OF is_site_admin, email_proof, password_hash ON users
  WHEN NEW.is_site_admin = 1 OR NEW.email_proof IS NOT NULL OR NEW.password_hash IS NOT NULL BEGIN
  DELETE FROM password_links WHERE user_id = NEW.id AND kind = 'invitation' AND used_at IS NULL;
END;

-- Browsers that signed in to an account with its password: their failed sign-ins count for that browser alone, so no
-- other client's failures lock them out (OWASP's device cookies). Only the cookie's SHA-256 is kept.
CREATE TABLE sign_in_devices (
  device_hash TEXT NOT NULL,
  user_id TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (device_hash, user_id)
);
CREATE INDEX sign_in_devices_expires ON sign_in_devices(expires_at);

-- The UI session that approved a `terraform login` code (its id's SHA-256): the code is exchanged only while that
-- session still stands, so signing out or a new password (which ends the user's sessions) kills its pending codes.
ALTER TABLE oauth_login_codes ADD COLUMN session_hash TEXT;
