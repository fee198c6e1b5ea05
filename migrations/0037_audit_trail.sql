-- The organisation audit trail (src/audit/): one row per recorded change or sign-in, in the shape HCP Terraform's
-- `GET /organization/audit-trail` answers. Append-only: no route edits or deletes a row; the organisation's data
-- retention policy prunes rows older than it keeps (audit.d1.ts, in the batch of every new event).
-- `seq` orders events recorded at the same millisecond; `id` is the event's UUID, unique so a retried outbox write
-- of a workspace object's events inserts each once.
CREATE TABLE audit_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  organization_id TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  type TEXT NOT NULL,
  accessor_id TEXT NOT NULL,
  description TEXT NOT NULL,
  auth_type TEXT NOT NULL,
  impersonator_id TEXT,
  request_id TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  resource_type TEXT NOT NULL,
  action TEXT NOT NULL,
  meta TEXT
);
CREATE INDEX audit_events_org_time ON audit_events(organization_id, timestamp, seq);
