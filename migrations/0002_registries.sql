-- Projects and registries.
-- An agent pool's `workspaces` relationship and its in-use check look workspaces up by pool; without
-- this index each would scan the organisation's whole workspace index.
CREATE INDEX workspaces_org_agent_pool ON workspaces(organization_name, agent_pool_id);

-- A project's default agent pool must exist in its organisation when the row is written. The handler
-- checks first (for the 422 text); these triggers close the race with a concurrent pool delete, whose
-- own statement refuses while a project names the pool: whichever commits first wins, never both.
CREATE TRIGGER projects_default_agent_pool_insert BEFORE INSERT ON projects
WHEN NEW.default_agent_pool_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM agent_pools WHERE id = NEW.default_agent_pool_id AND organization_name = NEW.organization_name)
BEGIN
  SELECT RAISE(ABORT, 'project_default_agent_pool_missing');
END;

CREATE TRIGGER projects_default_agent_pool_update BEFORE UPDATE OF default_agent_pool_id ON projects
WHEN NEW.default_agent_pool_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM agent_pools WHERE id = NEW.default_agent_pool_id AND organization_name = NEW.organization_name)
BEGIN
  SELECT RAISE(ABORT, 'project_default_agent_pool_missing');
END;
