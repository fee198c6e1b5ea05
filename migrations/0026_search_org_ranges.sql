-- Name search counts its matches within one organisation without visiting the matches of others. Each organisation
-- gets its own range of the search index's row ids (`base` .. `base` + 2^32 - 1, `workspace_search_orgs`), so the
-- full-text index answers "matches in this organisation" from its own posting lists with a rowid range, and an exact
-- `total-count` of a name search no longer looks up every match's row (src/workspaces/workspaces.list.d1.ts).
CREATE TABLE workspace_search_orgs (
  organization_id TEXT PRIMARY KEY,
  base INTEGER NOT NULL UNIQUE
);
INSERT INTO workspace_search_orgs (organization_id, base)
  SELECT organization_id, (row_number() OVER (ORDER BY organization_id)) * 4294967296
  FROM (SELECT DISTINCT organization_id FROM workspace_search);

-- The rows move into their organisation's range (in their old order), and the index is rebuilt over them.
DROP TRIGGER workspace_search_insert;
DROP TRIGGER workspace_search_rename;
DROP TRIGGER workspace_search_delete;
DROP TABLE workspace_search_fts;
CREATE TABLE workspace_search_ranged (
  rid INTEGER PRIMARY KEY,
  workspace_id TEXT NOT NULL UNIQUE,
  organization_id TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL
);
INSERT INTO workspace_search_ranged (rid, workspace_id, organization_id, name)
  SELECT o.base + row_number() OVER (PARTITION BY s.organization_id ORDER BY s.rid), s.workspace_id, s.organization_id, s.name
  FROM workspace_search s JOIN workspace_search_orgs o ON o.organization_id = s.organization_id;
DROP TABLE workspace_search;
ALTER TABLE workspace_search_ranged RENAME TO workspace_search;
CREATE INDEX workspace_search_org_name ON workspace_search(organization_id, name, workspace_id);
CREATE VIRTUAL TABLE workspace_search_fts USING fts5(name, content='workspace_search', content_rowid='rid', tokenize='trigram');
INSERT INTO workspace_search_fts (workspace_search_fts) VALUES ('rebuild');

-- A new row takes the next id of its organisation's range (the organisation's range is made on its first row; not
-- with OR IGNORE, which the index upsert's own conflict handling would override inside a trigger).
CREATE TRIGGER workspace_search_insert AFTER INSERT ON workspaces BEGIN
  INSERT INTO workspace_search_orgs (organization_id, base)
    SELECT NEW.organization_id, (SELECT coalesce(max(base), 0) + 4294967296 FROM workspace_search_orgs)
    WHERE NOT EXISTS (SELECT 1 FROM workspace_search_orgs WHERE organization_id = NEW.organization_id);
  INSERT INTO workspace_search (rid, workspace_id, organization_id, name)
    SELECT coalesce((SELECT max(s.rid) FROM workspace_search s WHERE s.rid BETWEEN o.base AND o.base + 4294967295), o.base) + 1,
      NEW.id, NEW.organization_id, NEW.name
    FROM workspace_search_orgs o WHERE o.organization_id = NEW.organization_id;
  INSERT INTO workspace_search_fts (rowid, name) SELECT rid, name FROM workspace_search WHERE workspace_id = NEW.id;
END;
-- A rename keeps the row's id; a row whose organisation changes (only ever a migration's doing) moves to that range.
CREATE TRIGGER workspace_search_rename AFTER UPDATE OF name, organization_id ON workspaces
WHEN OLD.name <> NEW.name COLLATE BINARY OR OLD.organization_id <> NEW.organization_id COLLATE BINARY BEGIN
  INSERT INTO workspace_search_fts (workspace_search_fts, rowid, name) SELECT 'delete', rid, name FROM workspace_search WHERE workspace_id = OLD.id;
  INSERT INTO workspace_search_orgs (organization_id, base)
    SELECT NEW.organization_id, (SELECT coalesce(max(base), 0) + 4294967296 FROM workspace_search_orgs)
    WHERE NOT EXISTS (SELECT 1 FROM workspace_search_orgs WHERE organization_id = NEW.organization_id);
  UPDATE workspace_search SET name = NEW.name, organization_id = NEW.organization_id,
    rid = CASE WHEN OLD.organization_id = NEW.organization_id COLLATE BINARY THEN rid ELSE
      (SELECT coalesce((SELECT max(s.rid) FROM workspace_search s WHERE s.rid BETWEEN o.base AND o.base + 4294967295), o.base) + 1
       FROM workspace_search_orgs o WHERE o.organization_id = NEW.organization_id) END
  WHERE workspace_id = OLD.id;
  INSERT INTO workspace_search_fts (rowid, name) SELECT rid, name FROM workspace_search WHERE workspace_id = OLD.id;
END;
CREATE TRIGGER workspace_search_delete AFTER DELETE ON workspaces BEGIN
  INSERT INTO workspace_search_fts (workspace_search_fts, rowid, name) SELECT 'delete', rid, name FROM workspace_search WHERE workspace_id = OLD.id;
  DELETE FROM workspace_search WHERE workspace_id = OLD.id;
END;
