-- Organisation token TTL policies (GET/PATCH /organizations/:name/token-ttl-policies). One row per
-- organisation and token type (organization, team, user, audit_trails), written on first use with the default
-- maximum; an organisation delete removes its rows (src/organizations/organizations.d1.ts), as every other table's.
CREATE TABLE token_ttl_policies (
  organization_id TEXT NOT NULL,
  token_type TEXT NOT NULL,
  id TEXT NOT NULL UNIQUE,
  max_ttl_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (organization_id, token_type)
);
