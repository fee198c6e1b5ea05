-- Run triggers (HCP Terraform API docs: Run Triggers): `workspace_id` gets a run when `sourceable_id` applies. A row
-- whose workspace or source is gone (no `workspaces` row) is never read: readers join both.
CREATE TABLE run_triggers (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  sourceable_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (workspace_id, sourceable_id)
);
CREATE INDEX run_triggers_sourceable ON run_triggers(sourceable_id, created_at);
