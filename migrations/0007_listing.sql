-- Listing, search and counts that stay cheap at 100,000 workspaces per organisation.
-- Everything here is derived from the `workspaces` index rows by triggers, in the same transaction
-- as the row change (the DO's version-guarded upsert or delete), so it can never drift from them.

-- total-count without counting rows: workspaces per (organisation, project).
CREATE TABLE workspace_counts (
  organization_name TEXT NOT NULL COLLATE NOCASE,
  project_id TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (organization_name, project_id)
);
INSERT INTO workspace_counts (organization_name, project_id, n)
  SELECT organization_name, project_id, count(*) FROM workspaces GROUP BY organization_name, project_id;

CREATE TRIGGER workspace_counts_insert AFTER INSERT ON workspaces BEGIN
  INSERT INTO workspace_counts (organization_name, project_id, n) VALUES (NEW.organization_name, NEW.project_id, 1)
    ON CONFLICT (organization_name, project_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER workspace_counts_delete AFTER DELETE ON workspaces BEGIN
  UPDATE workspace_counts SET n = n - 1 WHERE organization_name = OLD.organization_name AND project_id = OLD.project_id;
END;
CREATE TRIGGER workspace_counts_move AFTER UPDATE OF organization_name, project_id ON workspaces
WHEN OLD.project_id <> NEW.project_id OR OLD.organization_name <> NEW.organization_name BEGIN
  UPDATE workspace_counts SET n = n - 1 WHERE organization_name = OLD.organization_name AND project_id = OLD.project_id;
  INSERT INTO workspace_counts (organization_name, project_id, n) VALUES (NEW.organization_name, NEW.project_id, 1)
    ON CONFLICT (organization_name, project_id) DO UPDATE SET n = n + 1;
END;

-- search[name] / search[wildcard-name]: a trigram index over names. FTS5 needs an integer key, so
-- `workspace_search` maps it to the workspace id (an external-content table the FTS index reads).
CREATE TABLE workspace_search (
  rid INTEGER PRIMARY KEY,
  workspace_id TEXT NOT NULL UNIQUE,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL
);
CREATE INDEX workspace_search_org_name ON workspace_search(organization_name, name, workspace_id);
CREATE VIRTUAL TABLE workspace_search_fts USING fts5(name, content='workspace_search', content_rowid='rid', tokenize='trigram');
INSERT INTO workspace_search (workspace_id, organization_name, name) SELECT id, organization_name, name FROM workspaces;
INSERT INTO workspace_search_fts (workspace_search_fts) VALUES ('rebuild');

CREATE TRIGGER workspace_search_insert AFTER INSERT ON workspaces BEGIN
  INSERT INTO workspace_search (workspace_id, organization_name, name) VALUES (NEW.id, NEW.organization_name, NEW.name);
  INSERT INTO workspace_search_fts (rowid, name) SELECT rid, name FROM workspace_search WHERE workspace_id = NEW.id;
END;
CREATE TRIGGER workspace_search_rename AFTER UPDATE OF name, organization_name ON workspaces
WHEN OLD.name <> NEW.name COLLATE BINARY OR OLD.organization_name <> NEW.organization_name COLLATE BINARY BEGIN
  INSERT INTO workspace_search_fts (workspace_search_fts, rowid, name) SELECT 'delete', rid, name FROM workspace_search WHERE workspace_id = OLD.id;
  UPDATE workspace_search SET name = NEW.name, organization_name = NEW.organization_name WHERE workspace_id = OLD.id;
  INSERT INTO workspace_search_fts (rowid, name) SELECT rid, name FROM workspace_search WHERE workspace_id = OLD.id;
END;
CREATE TRIGGER workspace_search_delete AFTER DELETE ON workspaces BEGIN
  INSERT INTO workspace_search_fts (workspace_search_fts, rowid, name) SELECT 'delete', rid, name FROM workspace_search WHERE workspace_id = OLD.id;
  DELETE FROM workspace_search WHERE workspace_id = OLD.id;
END;

-- Ordered scans for each sort (and the project filter) that stop after one page, and covering
-- indexes for the id sets the filters build.
CREATE INDEX workspaces_org_project_created ON workspaces(organization_name, project_id, created_at, id);
CREATE INDEX workspaces_org_name_id ON workspaces(organization_name, name, id);
CREATE INDEX workspaces_org_run_created ON workspaces(organization_name, current_run_created_at IS NULL, current_run_created_at, created_at, id);
CREATE INDEX workspaces_org_run_status ON workspaces(organization_name, current_run_status, id) WHERE current_run_status IS NOT NULL;
CREATE INDEX workspace_tags_org_key_ws ON workspace_tags(organization_name, key, value, workspace_id, tag_id);
