/** Organisation memberships: who sees members' addresses, and the JSON:API shape (shared by the user and team routes). */
import type { OrgAccess } from "../auth/access";
import { seesMemberEmails } from "../auth/team-rights";
import type { Resource } from "../jsonapi/document";
import type { MembershipRow } from "./memberships.d1";

/** The caller's own user id, whose own address it always sees. */
export function viewerUserId(access: OrgAccess): string | null {
  return access.principal.kind === "user" ? access.principal.userId : null;
}

export function redactEmail(access: OrgAccess, m: MembershipRow): MembershipRow {
  return seesMemberEmails(access) || viewerUserId(access) === m.user_id ? m : { ...m, email: null };
}

export function serializeMembership(m: MembershipRow, teamIds: string[]): Resource {
  return {
    id: m.id,
    type: "organization-memberships",
    attributes: { status: m.status, email: m.email },
    relationships: {
      organization: { data: { id: m.organization_name, type: "organizations" } },
      user: { data: { id: m.user_id, type: "users" } },
      teams: { data: teamIds.map((id) => ({ id, type: "teams" })) },
    },
    links: { self: `/api/v2/organization-memberships/${m.id}` },
  };
}
