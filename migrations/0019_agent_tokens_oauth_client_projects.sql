-- Agent tokens (GET/POST /agent-pools/:id/authentication-tokens, GET/DELETE /authentication-tokens/:id): the tokens
-- agents join a pool with. Only the SHA-256 of the secret is kept. They live apart from `tokens` on purpose: the
-- API's authentication reads `tokens` alone, so an agent token can never act as a caller of the API.
CREATE TABLE agent_tokens (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  agent_pool_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  description TEXT NOT NULL,
  created_by TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);
CREATE INDEX agent_tokens_pool ON agent_tokens(agent_pool_id, created_at, id);

-- The projects an OAuth client is attached to (POST/DELETE /oauth-clients/:id/relationships/projects).
CREATE TABLE oauth_client_projects (
  oauth_client_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (oauth_client_id, project_id)
);
CREATE INDEX oauth_client_projects_project ON oauth_client_projects(project_id);

-- Cascades as triggers (as migration 0011's for variable sets), so the deletes of pools, projects, clients and, through
-- them, organisations need no knowledge of these tables: a deleted pool takes its tokens, a deleted project leaves
-- every client's list, a deleted client takes its list.
CREATE TRIGGER agent_tokens_on_pool_delete AFTER DELETE ON agent_pools BEGIN
  DELETE FROM agent_tokens WHERE agent_pool_id = OLD.id;
END;
CREATE TRIGGER oauth_client_projects_on_project_delete AFTER DELETE ON projects BEGIN
  DELETE FROM oauth_client_projects WHERE project_id = OLD.id;
END;
CREATE TRIGGER oauth_client_projects_on_client_delete AFTER DELETE ON oauth_clients BEGIN
  DELETE FROM oauth_client_projects WHERE oauth_client_id = OLD.id;
END;
