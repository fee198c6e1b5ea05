-- Organisation default data retention policies (self-hosted edition). Workspace policies live in the workspace DO.
CREATE TABLE organization_retention_policies (
  organization_name TEXT PRIMARY KEY COLLATE NOCASE,
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  delete_older_than_n_days INTEGER,
  created_at TEXT NOT NULL
);
