-- Variable sets are organisation-level, so they live in D1 (workspace variables live in each
-- workspace's Durable Object). Values are stored sealed (AES-GCM, src/variables/variables.crypto.ts).
CREATE TABLE varsets (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  global INTEGER NOT NULL DEFAULT 0,
  priority INTEGER NOT NULL DEFAULT 0,
  -- The owning project of a project-owned set; NULL when the organisation owns it.
  project_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX varsets_org_name ON varsets(organization_name, name);
CREATE INDEX varsets_project ON varsets(project_id);

CREATE TABLE varset_vars (
  id TEXT PRIMARY KEY,
  varset_id TEXT NOT NULL,
  key TEXT NOT NULL,
  category TEXT NOT NULL CHECK (category IN ('terraform', 'env')),
  -- Always sealed ("v1.<iv>.<ciphertext>", the variable id as associated data): never plaintext.
  value TEXT NOT NULL,
  description TEXT,
  hcl INTEGER NOT NULL DEFAULT 0,
  sensitive INTEGER NOT NULL DEFAULT 0,
  version_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
-- One key per category within a set (the 422 "Key has already been taken").
CREATE UNIQUE INDEX varset_vars_key ON varset_vars(varset_id, category, key);

CREATE TABLE varset_workspaces (
  varset_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  PRIMARY KEY (varset_id, workspace_id)
);
CREATE INDEX varset_workspaces_workspace ON varset_workspaces(workspace_id);

CREATE TABLE varset_projects (
  varset_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  PRIMARY KEY (varset_id, project_id)
);
CREATE INDEX varset_projects_project ON varset_projects(project_id);

-- Cascades as triggers, so the deletes of workspaces (the DO's index delete), projects and organisations
-- need no knowledge of variable sets: a deleted workspace or project leaves every set's lists, a deleted
-- project takes the sets it owns, a deleted organisation all of its sets, and a set its variables and links.
-- (The index upsert is INSERT ... ON CONFLICT DO UPDATE, never a delete, so it does not fire these.)
CREATE TRIGGER varset_workspaces_on_workspace_delete AFTER DELETE ON workspaces BEGIN
  DELETE FROM varset_workspaces WHERE workspace_id = OLD.id;
END;
CREATE TRIGGER varsets_on_project_delete AFTER DELETE ON projects BEGIN
  DELETE FROM varset_projects WHERE project_id = OLD.id;
  DELETE FROM varsets WHERE project_id = OLD.id;
END;
CREATE TRIGGER varsets_on_organization_delete AFTER DELETE ON organizations BEGIN
  DELETE FROM varsets WHERE organization_name = OLD.name;
END;
CREATE TRIGGER varset_children_on_varset_delete AFTER DELETE ON varsets BEGIN
  DELETE FROM varset_vars WHERE varset_id = OLD.id;
  DELETE FROM varset_workspaces WHERE varset_id = OLD.id;
  DELETE FROM varset_projects WHERE varset_id = OLD.id;
END;
