-- The index of runs (docs/runs.md): the runs live in their workspace's Durable Object, which writes these rows in
-- the batch of its index flush. `doc` is the run record as JSON; `version` orders the object's writes of one run.
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  plan_only INTEGER NOT NULL,
  is_destroy INTEGER NOT NULL,
  source TEXT NOT NULL,
  message TEXT NOT NULL,
  created_by TEXT,
  agent_pool_id TEXT,
  doc TEXT NOT NULL,
  version INTEGER NOT NULL
);
CREATE INDEX runs_organization ON runs(organization_id, created_at DESC, id DESC);
CREATE INDEX runs_workspace ON runs(workspace_id, created_at DESC, id DESC);

-- The phases waiting for (or held by) agents: agents of a pool find their work here, then claim it in the object.
-- agent_pool_id NULL: the default pool (remote-mode workspaces).
CREATE TABLE run_jobs (
  run_id TEXT NOT NULL,
  phase TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  agent_pool_id TEXT,
  status TEXT NOT NULL,
  queued_at TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (run_id, phase)
);
CREATE INDEX run_jobs_queue ON run_jobs(agent_pool_id, status, queued_at);
CREATE INDEX run_jobs_workspace ON run_jobs(workspace_id);
