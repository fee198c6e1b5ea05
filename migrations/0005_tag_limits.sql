-- Tags.
-- A key-only (flat) entry's organisation tag id, so instance counts follow ids and organisation
-- tags can be deleted with one batch and no fan-out: the deleted ids are kept in `deleted_tags`,
-- every read treats an entry carrying one as absent, and its workspace purges it on its next tag
-- change. Ids are random and never reused, so tombstones never hide a live entry.
ALTER TABLE workspace_tags ADD COLUMN tag_id TEXT;
CREATE INDEX workspace_tags_tag ON workspace_tags(tag_id);

CREATE TABLE deleted_tags (
  id TEXT PRIMARY KEY,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  name TEXT NOT NULL,
  deleted_at TEXT NOT NULL
);
CREATE INDEX deleted_tags_org ON deleted_tags(organization_name);

-- At most 10 tag bindings per project (the documented limit), enforced where concurrent writers meet.
-- Project tag-binding writes are single D1 batches (transactions); this aborts (and so rolls back)
-- any batch that would leave a project with more than 10, so concurrent PATCHes cannot add up past it.
CREATE TRIGGER project_tag_bindings_limit AFTER INSERT ON project_tag_bindings
WHEN (SELECT count(*) FROM project_tag_bindings WHERE project_id = NEW.project_id) > 10
BEGIN
  SELECT RAISE(ABORT, 'project_tag_bindings_limit');
END;
