-- An email change waits for confirmation; an invitation binds to the invited
-- address, and its teams are granted only when the invited user accepts it.
ALTER TABLE users ADD COLUMN unconfirmed_email TEXT;
ALTER TABLE organization_memberships ADD COLUMN invited_email TEXT;
CREATE TABLE invitation_teams (
  membership_id TEXT NOT NULL,
  team_id TEXT NOT NULL,
  PRIMARY KEY (membership_id, team_id)
);
CREATE INDEX invitation_teams_team ON invitation_teams(team_id);
-- Pending invitations made before this migration: their team rows become pending grants.
UPDATE organization_memberships SET invited_email = (SELECT email FROM users u WHERE u.id = organization_memberships.user_id)
  WHERE status = 'invited';
INSERT OR IGNORE INTO invitation_teams (membership_id, team_id)
  SELECT m.id, tm.team_id FROM organization_memberships m
  JOIN team_members tm ON tm.user_id = m.user_id
  JOIN teams t ON t.id = tm.team_id AND t.organization_name = m.organization_name
  WHERE m.status = 'invited';
DELETE FROM team_members WHERE EXISTS (
  SELECT 1 FROM organization_memberships m JOIN teams t ON t.organization_name = m.organization_name
  WHERE m.status = 'invited' AND m.user_id = team_members.user_id AND t.id = team_members.team_id);
