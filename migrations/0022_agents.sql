-- Agents (GET /agent-pools/:id/agents, GET /agents/:id; the private agent protocol registers them and records their
-- pings, docs/runs.md). `agent_pool_id` NULL: the operator's default pool (AGENT_TOKEN), which serves every
-- `remote`-mode workspace and belongs to no organisation (`organization_id` NULL with it).
CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  agent_pool_id TEXT,
  organization_id TEXT,
  name TEXT NOT NULL,
  version TEXT,
  status TEXT NOT NULL,
  ip_address TEXT,
  last_ping_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX agents_pool ON agents(agent_pool_id, created_at, id);

-- A deleted pool takes its agents (as migration 0019's trigger takes its tokens).
CREATE TRIGGER agents_on_pool_delete AFTER DELETE ON agent_pools BEGIN
  DELETE FROM agents WHERE agent_pool_id = OLD.id;
END;
