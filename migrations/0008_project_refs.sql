-- A workspace's reference to a project is held here, in D1, from before the DO commits
-- a create or move into the project until the workspace's index row carries it. The lease is taken
-- only while the project exists, and the project delete refuses while any lease (or index row) names
-- the project: both are decided by D1, so the two can no longer both succeed.
CREATE TABLE project_refs (
  project_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  claimed_at INTEGER NOT NULL,             -- epoch ms
  PRIMARY KEY (project_id, workspace_id)
);
CREATE INDEX project_refs_ws ON project_refs(workspace_id);
