-- Organisation run tasks (HCP Terraform API docs: Run Tasks). `hmac_key` is sealed (variables.crypto.ts) and never
-- answered. `workspace_run_tasks` indexes the attachments each workspace's object holds (the object is their writer
-- and the run engine reads its own copy), for the reads across workspaces: a task's `workspace_tasks`.
CREATE TABLE run_tasks (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  description TEXT,
  category TEXT NOT NULL,
  hmac_key TEXT,
  enabled INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX run_tasks_organization ON run_tasks(organization_id, created_at);
CREATE TABLE workspace_run_tasks (
  id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  enforcement_level TEXT NOT NULL,
  stages TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX workspace_run_tasks_task ON workspace_run_tasks(task_id, created_at);
