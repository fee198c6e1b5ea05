-- A workspace has two tag sets, flat tags and tag bindings, and one key may be in both
-- (Terraform's cloud block gives each tag a flat tag and a key-only binding). `workspace_tags`
-- gains a `kind` and a primary key that includes it, so the table is rebuilt.
-- Existing rows split as each workspace's Durable Object migration splits its record: a valued
-- row is a binding, a key-only row (NULL value, carrying its organisation tag id) a flat tag. Each
-- DO then rewrites its rows through its outbox with the same result, so the two never disagree.
CREATE TABLE workspace_tags_v2 (
  workspace_id TEXT NOT NULL,
  organization_name TEXT NOT NULL COLLATE NOCASE,
  kind TEXT NOT NULL CHECK (kind IN ('flat', 'binding')),
  key TEXT NOT NULL,
  -- NULL for a flat tag; the binding's value ("" when key-only) for a binding.
  value TEXT,
  position INTEGER NOT NULL,
  -- The organisation tag id of a flat tag; NULL for a binding.
  tag_id TEXT,
  PRIMARY KEY (workspace_id, kind, key)
);

INSERT INTO workspace_tags_v2 (workspace_id, organization_name, kind, key, value, position, tag_id)
  SELECT workspace_id, organization_name, CASE WHEN value IS NULL THEN 'flat' ELSE 'binding' END, key, value, position,
         CASE WHEN value IS NULL THEN tag_id ELSE NULL END
  FROM workspace_tags;

DROP TABLE workspace_tags;
ALTER TABLE workspace_tags_v2 RENAME TO workspace_tags;

-- The indexes of migrations 0005 and 0007 (0001's is a prefix of 0007's), with the kind: list filters look keys up by
-- organisation (search[tags] any kind, filter[tagged] bindings only); tag counts go by tag id.
CREATE INDEX workspace_tags_tag ON workspace_tags(tag_id);
CREATE INDEX workspace_tags_org_key_ws ON workspace_tags(organization_name, key, kind, value, workspace_id, tag_id);
