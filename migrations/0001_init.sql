-- Organisation-wide data and the workspace index. Workspaces themselves live in their
-- Durable Objects; the `workspaces` table is an index the DOs keep up to date (outbox).

CREATE TABLE organizations (
  name TEXT PRIMARY KEY COLLATE NOCASE,
  external_id TEXT NOT NULL UNIQUE,
  email TEXT NOT NULL,
  created_at TEXT NOT NULL,
  attrs TEXT NOT NULL DEFAULT '{}',           -- JSON of the writable settings
  default_execution_mode TEXT NOT NULL DEFAULT 'remote',
  default_agent_pool_id TEXT,
  allow_force_delete_workspaces INTEGER NOT NULL DEFAULT 0,
  default_project_id TEXT NOT NULL
);

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  username TEXT NOT NULL UNIQUE COLLATE NOCASE,
  email TEXT,
  is_site_admin INTEGER NOT NULL DEFAULT 0,
  is_service_account INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);

-- Every API token: user, team or organisation. Only the SHA-256 of the secret is kept.
CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,                      -- 'user' | 'team' | 'organization'
  user_id TEXT,                            -- user tokens
  team_id TEXT,                            -- team tokens
  organization_name TEXT COLLATE NOCASE,   -- organisation tokens (and team tokens, denormalised)
  description TEXT,
  legacy INTEGER NOT NULL DEFAULT 0,       -- the single "authentication-token" of a team
  created_by TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  expired_at TEXT
);
CREATE INDEX tokens_user ON tokens(user_id);
CREATE INDEX tokens_team ON tokens(team_id);
CREATE INDEX tokens_org ON tokens(organization_name, kind);

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL,
  description TEXT,
  is_default INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  attrs TEXT NOT NULL DEFAULT '{}',
  default_execution_mode TEXT,             -- null: inherit the organisation's
  default_agent_pool_id TEXT
);
CREATE UNIQUE INDEX projects_org_name ON projects(organization_name, name COLLATE NOCASE);

CREATE TABLE project_tag_bindings (
  project_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL DEFAULT '',
  id TEXT NOT NULL,
  position INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX project_tag_bindings_key ON project_tag_bindings(key, value);

CREATE TABLE teams (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL,
  is_owners INTEGER NOT NULL DEFAULT 0,
  visibility TEXT NOT NULL DEFAULT 'secret',
  sso_team_id TEXT,
  organization_access TEXT NOT NULL DEFAULT '{}',
  allow_member_token_management INTEGER NOT NULL DEFAULT 1,
  service_user_id TEXT,                    -- the synthetic user a team token acts as
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX teams_org_name ON teams(organization_name, name COLLATE NOCASE);

CREATE TABLE team_members (
  team_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members(user_id);

CREATE TABLE organization_memberships (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  user_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  created_at TEXT NOT NULL,
  UNIQUE (organization_name, user_id)
);

CREATE TABLE team_workspaces (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  access TEXT NOT NULL,
  perms TEXT NOT NULL DEFAULT '{}',        -- custom permission keys (JSON)
  created_at TEXT NOT NULL,
  UNIQUE (team_id, workspace_id)
);
CREATE INDEX team_workspaces_ws ON team_workspaces(workspace_id);

CREATE TABLE team_projects (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  access TEXT NOT NULL,
  perms TEXT NOT NULL DEFAULT '{}',        -- {"project-access":{...},"workspace-access":{...}}
  created_at TEXT NOT NULL,
  UNIQUE (team_id, project_id)
);
CREATE INDEX team_projects_project ON team_projects(project_id);

CREATE TABLE agent_pools (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL,
  organization_scoped INTEGER NOT NULL DEFAULT 1,
  allowed_workspaces TEXT NOT NULL DEFAULT '[]',
  allowed_projects TEXT NOT NULL DEFAULT '[]',
  excluded_workspaces TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX agent_pools_org_name ON agent_pools(organization_name, name COLLATE NOCASE);

CREATE TABLE oauth_clients (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  attrs TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL
);

CREATE TABLE oauth_tokens (
  id TEXT PRIMARY KEY,
  oauth_client_id TEXT NOT NULL,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  service_provider_user TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX oauth_tokens_client ON oauth_tokens(oauth_client_id);

CREATE TABLE ssh_keys (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX ssh_keys_org ON ssh_keys(organization_name);

-- Organisation (flat) tags. A tag exists while at least one workspace carries it.
CREATE TABLE tags (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX tags_org_name ON tags(organization_name, name);

-- The workspace index: one row per committed workspace, written only by its DO (version-guarded).
CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL COLLATE NOCASE,
  project_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  latest_change_at TEXT NOT NULL,
  current_run_status TEXT,
  current_run_created_at TEXT,
  ssh_key_id TEXT,
  agent_pool_id TEXT,
  locked INTEGER NOT NULL DEFAULT 0,
  doc TEXT NOT NULL                        -- the DO's full record (JSON), serialised by the Worker
);
CREATE INDEX workspaces_org_name ON workspaces(organization_name, name);
CREATE INDEX workspaces_org_project ON workspaces(organization_name, project_id);
CREATE INDEX workspaces_org_created ON workspaces(organization_name, created_at, id);
CREATE INDEX workspaces_org_latest_change ON workspaces(organization_name, latest_change_at, id);

-- A workspace's tags (flat tags are keys with a NULL value), kept by the DO's outbox.
CREATE TABLE workspace_tags (
  workspace_id TEXT NOT NULL,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  key TEXT NOT NULL,
  value TEXT,
  position INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, key)
);
CREATE INDEX workspace_tags_org_key ON workspace_tags(organization_name, key, value);

-- Name leases: a create or rename claims (org, name) for a workspace id before its DO commits.
CREATE TABLE workspace_names (
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL COLLATE NOCASE,
  workspace_id TEXT NOT NULL,
  claimed_at INTEGER NOT NULL,             -- epoch ms
  committed INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (organization_name, name)
);
CREATE INDEX workspace_names_ws ON workspace_names(workspace_id);
