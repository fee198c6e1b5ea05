-- The private registry: modules and providers of an organisation, and the GPG keys that sign its providers.
-- Archives, checksums, signatures and provider binaries are R2 objects (the REGISTRY bucket); these rows name them
-- by key (`*_key`, null until uploaded). A private module's or provider's namespace is its organisation's name, read
-- from `organizations` (so a rename moves it); a public one (curated from the public registry) stores its own.

CREATE TABLE registry_modules (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  registry_name TEXT NOT NULL,
  -- '' for a private module (its namespace is the organisation's name).
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  provider TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, registry_name, namespace, name, provider)
);

CREATE TABLE registry_module_versions (
  id TEXT PRIMARY KEY,
  module_id TEXT NOT NULL,
  version TEXT NOT NULL,
  -- pending (nothing uploaded yet), ok, reg_ingress_failed (the last upload was not a valid module: `error` says why).
  status TEXT NOT NULL,
  error TEXT,
  commit_sha TEXT,
  archive_key TEXT,
  archive_bytes INTEGER,
  -- What was read from the archive (root module, submodules, examples), as JSON; null until an upload is accepted.
  details TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (module_id, version)
);

CREATE TABLE registry_providers (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  registry_name TEXT NOT NULL,
  -- '' for a private provider (its namespace is the organisation's name).
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, registry_name, namespace, name)
);

CREATE TABLE registry_provider_versions (
  id TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL,
  version TEXT NOT NULL,
  key_id TEXT NOT NULL,
  protocols TEXT NOT NULL,
  shasums_key TEXT,
  shasums_sig_key TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (provider_id, version)
);

CREATE TABLE registry_provider_platforms (
  id TEXT PRIMARY KEY,
  version_id TEXT NOT NULL,
  os TEXT NOT NULL,
  arch TEXT NOT NULL,
  filename TEXT NOT NULL,
  shasum TEXT NOT NULL,
  binary_key TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (version_id, os, arch)
);

-- A key belongs to one organisation's namespace; the same key may be added to several organisations.
CREATE TABLE registry_gpg_keys (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  ascii_armor TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (organization_id, key_id)
);

-- Tag bindings of registry modules and providers (`resource_id`: a module's or provider's id).
CREATE TABLE registry_tag_bindings (
  id TEXT PRIMARY KEY,
  resource_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (resource_id, key)
);

CREATE INDEX registry_module_versions_module ON registry_module_versions(module_id);
CREATE INDEX registry_provider_versions_provider ON registry_provider_versions(provider_id);
CREATE INDEX registry_provider_platforms_version ON registry_provider_platforms(version_id);

-- Deletes cascade here, so no other resource's delete needs to know the registry (as variable sets do, 0011). The R2
-- objects the rows named are left to the deleting service (a module's, provider's or version's delete removes them;
-- an organisation's delete leaves them under its prefix, unreachable: no row, so no signed URL, names them).
CREATE TRIGGER registry_modules_on_organization_delete AFTER DELETE ON organizations BEGIN
  DELETE FROM registry_modules WHERE organization_id = OLD.external_id;
  DELETE FROM registry_providers WHERE organization_id = OLD.external_id;
  DELETE FROM registry_gpg_keys WHERE organization_id = OLD.external_id;
END;

CREATE TRIGGER registry_module_children_on_delete AFTER DELETE ON registry_modules BEGIN
  DELETE FROM registry_module_versions WHERE module_id = OLD.id;
  DELETE FROM registry_tag_bindings WHERE resource_id = OLD.id;
END;

CREATE TRIGGER registry_provider_children_on_delete AFTER DELETE ON registry_providers BEGIN
  DELETE FROM registry_provider_versions WHERE provider_id = OLD.id;
  DELETE FROM registry_tag_bindings WHERE resource_id = OLD.id;
END;

CREATE TRIGGER registry_provider_version_children_on_delete AFTER DELETE ON registry_provider_versions BEGIN
  DELETE FROM registry_provider_platforms WHERE version_id = OLD.id;
END;
