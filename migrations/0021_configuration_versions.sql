-- Which workspace (and organisation) holds a configuration version; its data lives in that workspace's Durable Object.
CREATE TABLE configuration_versions (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL,
  organization_id TEXT NOT NULL
);
CREATE INDEX configuration_versions_ws ON configuration_versions(workspace_id);
