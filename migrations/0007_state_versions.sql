-- Which workspace holds a state version (its data lives in that workspace's Durable Object).
CREATE TABLE state_version_index (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX state_version_index_ws ON state_version_index(workspace_id);
