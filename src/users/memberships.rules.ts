/** Organisation memberships: whose address a caller sees (who sees all of them: src/auth/team-rights.ts). */
import type { OrgAccess } from "../auth/access";
import { seesMemberEmails } from "../auth/team-rights";
import type { Membership } from "./memberships.d1";

/** The caller's own user id, whose own address it always sees. */
export function viewerUserId(access: OrgAccess): string | null {
  return access.principal.kind === "user" ? access.principal.userId : null;
}

export function redactEmail(access: OrgAccess, m: Membership): Membership {
  return seesMemberEmails(access) || viewerUserId(access) === m.userId ? m : { ...m, email: null };
}
