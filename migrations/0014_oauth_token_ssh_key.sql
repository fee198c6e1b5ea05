-- PATCH /oauth-tokens/:id sets a private SSH key for VCS clones. This service never clones, so it keeps
-- only the fact (`has-ssh-key`), never the key itself.
ALTER TABLE oauth_tokens ADD COLUMN has_ssh_key INTEGER NOT NULL DEFAULT 0;
