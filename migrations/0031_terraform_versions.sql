-- The Terraform versions workspaces may use (the site-admin API /api/v2/admin/terraform-versions), seeded from a
-- releases index (TERRAFORM_RELEASES_URL) and edited by site admins. `sort_key` orders versions as semantic versions
-- (src/terraform-versions/terraform-versions.rules.ts, sortKey); `archs` is the JSON list of {url, sha, os, arch};
-- `url`/`sha` repeat its linux/amd64 entry (empty when it has none). `shasums_url`/`shasums_signature_url`: where the
-- release's SHA256SUMS and its signature are, for versions read from a releases index (null for admin-made ones).
CREATE TABLE terraform_versions (
  id TEXT PRIMARY KEY,
  version TEXT NOT NULL UNIQUE,
  sort_key TEXT NOT NULL,
  prerelease INTEGER NOT NULL,
  url TEXT NOT NULL,
  sha TEXT NOT NULL,
  archs TEXT NOT NULL,
  official INTEGER NOT NULL,
  enabled INTEGER NOT NULL,
  beta INTEGER NOT NULL,
  deprecated INTEGER NOT NULL,
  deprecated_reason TEXT,
  shasums_url TEXT,
  shasums_signature_url TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX terraform_versions_sort ON terraform_versions(sort_key);

-- Every version a sync ever added (kept after an admin deletes it, so the next sync does not bring it back), and the
-- one row of the sync's state: when it last started (its lease), last succeeded, and why it last failed.
CREATE TABLE terraform_versions_seen (
  version TEXT PRIMARY KEY
);
CREATE TABLE terraform_versions_sync (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  source TEXT NOT NULL,
  started_at TEXT NOT NULL,
  succeeded_at TEXT,
  error TEXT,
  pending INTEGER NOT NULL DEFAULT 0
);

-- The jobs an agent holds now (claimed, not yet finished), for the agents' pages: written with the claim, removed
-- with the finish, and all of an agent's when it reports itself idle or exited.
CREATE TABLE agent_jobs (
  agent_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  phase TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  claimed_at TEXT NOT NULL,
  PRIMARY KEY (agent_id, run_id, phase)
);
CREATE INDEX agent_jobs_run ON agent_jobs(run_id, phase);

CREATE TRIGGER agent_jobs_on_agent_delete AFTER DELETE ON agents BEGIN
  DELETE FROM agent_jobs WHERE agent_id = OLD.id;
END;
