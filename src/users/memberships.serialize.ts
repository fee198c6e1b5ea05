/** The `organization-memberships` resource, alone or with its included users and teams. */
import type { Resource } from "../jsonapi/document";
import type { Membership } from "./memberships.d1";
import type { MembershipsView } from "./memberships.service";
import { serializeStoredUser } from "./users.serialize";

export function serializeMembership(m: Membership, teamIds: string[]): Resource {
  return {
    id: m.id,
    type: "organization-memberships",
    attributes: { status: m.status, email: m.email },
    relationships: {
      organization: { data: { id: m.organizationName, type: "organizations" } },
      user: { data: { id: m.userId, type: "users" } },
      teams: { data: teamIds.map((id) => ({ id, type: "teams" })) },
    },
    links: { self: `/api/v2/organization-memberships/${m.id}` },
  };
}

/** Memberships with their teams, and the included users and teams. */
export function serializeMemberships(view: MembershipsView): { data: Resource[]; included: Resource[] } {
  const data = view.memberships.map((m, i) => serializeMembership(m, view.teams[i]));
  const included: Resource[] = [];
  if (view.includeUsers) {
    const seen = new Set<string>();
    for (const m of view.memberships) {
      if (seen.has(m.userId)) continue;
      seen.add(m.userId);
      included.push(serializeStoredUser({ id: m.userId, username: m.username, email: m.email, isSiteAdmin: false, unconfirmedEmail: null }));
    }
  }
  for (const t of view.includedTeams ?? []) included.push({ id: t.id, type: "teams", attributes: { name: t.name }, links: { self: `/api/v2/teams/${t.id}` } });
  return { data, included };
}
