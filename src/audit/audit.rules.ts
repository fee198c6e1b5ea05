/**
 * The organisation audit trail's events, in the shape of HCP Terraform's audit trails API (not JSON:API: the docs'
 * "Audit trails API reference", and go-tfe's audit_trail.go `AuditTrail`): who (`auth`), which request, and what
 * (`resource`: its id, type, action and a small `meta`). Pure: the services build an event, then write it with the
 * change it records (audit.d1.ts for D1 changes, audit.object.ts through a workspace object's outbox).
 */
import type { Principal } from "../auth/principal";
import { nowIso } from "../ids";

/** The actor of an event (HCP's `auth`). */
export interface AuditAuth {
  accessorId: string;
  description: string;
  /** HCP's values: "Client" (a token or session acting for itself), "Impersonated", "Unauthenticated". */
  type: "Client" | "Impersonated" | "Unauthenticated";
  impersonatorId: string | null;
}

/** What an event is about (HCP's `resource`). `meta` holds names, keys and categories, never a value or secret. */
export interface AuditResource {
  id: string;
  type: AuditResourceType;
  action: string;
  meta: Record<string, string | number | boolean | null> | null;
}

/** The resource types events name (HCP's snake-case singulars). */
export type AuditResourceType =
  | "workspace"
  | "variable"
  | "varset"
  | "team"
  | "team_membership"
  | "team_access"
  | "authentication_token"
  | "run"
  | "state_version"
  | "user_session";

export interface AuditEvent {
  id: string;
  organizationId: string;
  timestamp: string;
  auth: AuditAuth;
  requestId: string;
  resource: AuditResource;
}

/** The schema version of the events (a string, as in the docs' sample and go-tfe). */
export const AUDIT_EVENT_VERSION = "0";
/** Every recorded event is about a resource (the docs' sample type). */
export const AUDIT_EVENT_TYPE = "Resource";

/** Who an API caller is, as an event names it; a description is a name people read, never a token. */
export function auditAuthOf(p: Principal): AuditAuth {
  switch (p.kind) {
    case "user":
      return { accessorId: p.userId, description: p.username, type: "Client", impersonatorId: null };
    case "team":
      return { accessorId: p.teamId, description: "team token", type: "Client", impersonatorId: null };
    case "organization":
      return { accessorId: p.serviceUserId, description: "organization token", type: "Client", impersonatorId: null };
    case "run":
      return { accessorId: p.runId, description: `run ${p.runId}`, type: "Client", impersonatorId: null };
  }
}

/** A new event, stamped now. */
export function auditEvent(organizationId: string, auth: AuditAuth, requestId: string | undefined, resource: AuditResource): AuditEvent {
  return { id: crypto.randomUUID(), organizationId, timestamp: nowIso(), auth, requestId: requestId ?? crypto.randomUUID(), resource };
}
