-- Organisations can be renamed. Every row that belongs to an organisation named it by its name; from here
-- on it names it by the organisation's immutable id (`organizations.external_id`, `org-…`), and the name lives only in
-- the organisations row, joined in at read time. A rename is then one UPDATE of that row: no workspace index row,
-- name claim, team, token or other row changes, and no workspace's Durable Object is visited.
-- Each `organization_name` column is renamed in place to `organization_id` (its indexes, unique constraints and the
-- triggers that read it follow the rename) and its values are converted once, below.

-- The workspace index triggers that react to an organisation change are set aside while the index is converted (a
-- conversion is not a move: the counts and search rows are converted directly), and recreated afterwards. The variable
-- sets' organisation cascade matched sets by the deleted organisation's name; it is recreated to match its id.
DROP TRIGGER workspace_counts_move;
DROP TRIGGER workspace_search_rename;
DROP TRIGGER varsets_on_organization_delete;

ALTER TABLE tokens RENAME COLUMN organization_name TO organization_id;
ALTER TABLE projects RENAME COLUMN organization_name TO organization_id;
ALTER TABLE teams RENAME COLUMN organization_name TO organization_id;
ALTER TABLE organization_memberships RENAME COLUMN organization_name TO organization_id;
ALTER TABLE agent_pools RENAME COLUMN organization_name TO organization_id;
ALTER TABLE oauth_clients RENAME COLUMN organization_name TO organization_id;
ALTER TABLE oauth_tokens RENAME COLUMN organization_name TO organization_id;
ALTER TABLE ssh_keys RENAME COLUMN organization_name TO organization_id;
ALTER TABLE tags RENAME COLUMN organization_name TO organization_id;
ALTER TABLE deleted_tags RENAME COLUMN organization_name TO organization_id;
ALTER TABLE workspaces RENAME COLUMN organization_name TO organization_id;
ALTER TABLE workspace_tags RENAME COLUMN organization_name TO organization_id;
ALTER TABLE workspace_names RENAME COLUMN organization_name TO organization_id;
ALTER TABLE workspace_counts RENAME COLUMN organization_name TO organization_id;
ALTER TABLE workspace_search RENAME COLUMN organization_name TO organization_id;
ALTER TABLE organization_retention_policies RENAME COLUMN organization_name TO organization_id;
ALTER TABLE varsets RENAME COLUMN organization_name TO organization_id;

-- Names become ids. A row whose organisation no longer exists (none should: an organisation delete removes every row
-- of it in one batch) keeps its old value, which names no organisation id.
UPDATE tokens SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = tokens.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE projects SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = projects.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE teams SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = teams.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE organization_memberships SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = organization_memberships.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE agent_pools SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = agent_pools.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE oauth_clients SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = oauth_clients.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE oauth_tokens SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = oauth_tokens.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE ssh_keys SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = ssh_keys.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE tags SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = tags.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE deleted_tags SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = deleted_tags.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE workspace_tags SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = workspace_tags.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE workspace_names SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = workspace_names.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE workspace_counts SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = workspace_counts.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE workspace_search SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = workspace_search.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE organization_retention_policies
  SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = organization_retention_policies.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE varsets SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = varsets.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
-- The index rows' documents (each workspace's record as its Durable Object holds it) lose the name too: the objects'
-- schema 6 drops it from their records, which carry the organisation's id (`organizationId`) already.
UPDATE workspaces SET organization_id = (SELECT o.external_id FROM organizations o WHERE o.name = workspaces.organization_id)
  WHERE organization_id IN (SELECT name FROM organizations);
UPDATE workspaces SET doc = json_remove(doc, '$.organization') WHERE json_type(doc, '$.organization') IS NOT NULL;

-- Migration 0007's triggers, on the id (a workspace never changes organisation; they stay for completeness).
CREATE TRIGGER workspace_counts_move AFTER UPDATE OF organization_id, project_id ON workspaces
WHEN OLD.project_id <> NEW.project_id OR OLD.organization_id <> NEW.organization_id BEGIN
  UPDATE workspace_counts SET n = n - 1 WHERE organization_id = OLD.organization_id AND project_id = OLD.project_id;
  INSERT INTO workspace_counts (organization_id, project_id, n) VALUES (NEW.organization_id, NEW.project_id, 1)
    ON CONFLICT (organization_id, project_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER workspace_search_rename AFTER UPDATE OF name, organization_id ON workspaces
WHEN OLD.name <> NEW.name COLLATE BINARY OR OLD.organization_id <> NEW.organization_id COLLATE BINARY BEGIN
  INSERT INTO workspace_search_fts (workspace_search_fts, rowid, name) SELECT 'delete', rid, name FROM workspace_search WHERE workspace_id = OLD.id;
  UPDATE workspace_search SET name = NEW.name, organization_id = NEW.organization_id WHERE workspace_id = OLD.id;
  INSERT INTO workspace_search_fts (rowid, name) SELECT rid, name FROM workspace_search WHERE workspace_id = OLD.id;
END;
-- Migration 0011's organisation cascade, by id.
CREATE TRIGGER varsets_on_organization_delete AFTER DELETE ON organizations BEGIN
  DELETE FROM varsets WHERE organization_id = OLD.external_id;
END;
