-- Runs from repositories (src/vcs/). An OAuth client's token string is kept sealed (AES-GCM, the variables' key, the
-- token's id as associated data) so the service can act on the VCS host; it is never answered back.
ALTER TABLE oauth_tokens ADD COLUMN token_sealed TEXT;

-- Which repository a workspace is connected to, read from the index's copy of its record, so a delivery finds its
-- workspaces and a hook knows whether any workspace still uses it.
ALTER TABLE workspaces ADD COLUMN vcs_token_id TEXT GENERATED ALWAYS AS (json_extract(doc, '$.settings."vcs-repo"."oauth-token-id"')) VIRTUAL;
ALTER TABLE workspaces ADD COLUMN vcs_repo TEXT GENERATED ALWAYS AS (lower(json_extract(doc, '$.settings."vcs-repo".identifier'))) VIRTUAL;
CREATE INDEX workspaces_vcs ON workspaces(vcs_token_id, vcs_repo);

-- One webhook per (OAuth token, repository), shared by every workspace connected to it, recorded once the host has
-- it. `secret_sealed`: the secret the host signs deliveries with (sealed, the hook's id as associated data);
-- `host_hook_id`: the hook's id on the host.
CREATE TABLE vcs_hooks (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  oauth_token_id TEXT NOT NULL,
  repo TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  host_hook_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  registered_at TEXT NOT NULL
);
CREATE UNIQUE INDEX vcs_hooks_token_repo ON vcs_hooks(oauth_token_id, repo);

-- Every delivery a hook received, once its signature held: the dedupe key (the host's delivery id) and what became of it.
CREATE TABLE vcs_deliveries (
  hook_id TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  event TEXT NOT NULL,
  action TEXT,
  repo TEXT,
  sha TEXT,
  received_at TEXT NOT NULL,
  workspaces INTEGER NOT NULL DEFAULT 0,
  outcome TEXT NOT NULL,
  PRIMARY KEY (hook_id, delivery_id)
);
CREATE INDEX vcs_deliveries_received ON vcs_deliveries(hook_id, received_at);
