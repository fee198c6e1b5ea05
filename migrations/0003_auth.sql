-- The bootstrap site admin is found by a marker, not by its username (which it may change
-- through PATCH /account/update); lookups by email (organisation invitations, membership filters).
ALTER TABLE users ADD COLUMN is_bootstrap INTEGER NOT NULL DEFAULT 0;
UPDATE users SET is_bootstrap = 1
  WHERE id = (SELECT id FROM users WHERE username = 'admin' AND is_site_admin = 1 ORDER BY created_at LIMIT 1);
CREATE UNIQUE INDEX users_bootstrap ON users(is_bootstrap) WHERE is_bootstrap = 1;
CREATE INDEX users_email ON users(email COLLATE NOCASE);
CREATE INDEX organization_memberships_user ON organization_memberships(user_id);
-- Token invariants that must hold under concurrent creates: one organisation token per organisation,
-- one legacy token per team, unique descriptions among a team's tokens.
CREATE UNIQUE INDEX tokens_one_org_token ON tokens(organization_name) WHERE kind = 'organization';
CREATE UNIQUE INDEX tokens_one_legacy_team_token ON tokens(team_id) WHERE kind = 'team' AND legacy = 1;
CREATE UNIQUE INDEX tokens_team_description ON tokens(team_id, description) WHERE kind = 'team' AND description IS NOT NULL;
