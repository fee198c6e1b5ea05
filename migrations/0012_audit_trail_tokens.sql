-- An organisation holds one ordinary organisation token and, beside it, one audit-trails
-- token (`?token=audit-trails`); creating either replaces only its own kind.
CREATE UNIQUE INDEX tokens_one_audit_trails_token ON tokens(organization_name) WHERE kind = 'audit-trails';
