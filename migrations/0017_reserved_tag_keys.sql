-- Reserved tag keys (GET/POST /organizations/:name/reserved-tag-keys, PATCH/DELETE /reserved-tag-keys/:id).
-- Named by the organisation's immutable id like every table (0016); a key is unique in its organisation, exactly
-- as written (binding keys are case-sensitive); the list is in the order they were added (rowid), served by the
-- unique index's organisation prefix. The organisation delete removes them (src/organizations/organizations.d1.ts).
CREATE TABLE reserved_tag_keys (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  key TEXT NOT NULL,
  disable_overrides INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, key)
);
