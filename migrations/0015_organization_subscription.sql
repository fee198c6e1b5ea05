-- The hosted edition's subscriptions. A site admin assigns an organisation a plan (a feature set,
-- src/subscriptions/feature-sets.ts) with POST /admin/organizations/:name/subscription; the organisation's
-- entitlement set and permissions follow it. One JSON document (id, feature set, ceilings, contract dates), kept
-- on the organisation's own row so every read of the organisation carries its plan and deleting the organisation
-- deletes it. NULL: no plan assigned (the hosted edition's Free plan; the self-hosted edition has no plans).
ALTER TABLE organizations ADD COLUMN subscription TEXT;
