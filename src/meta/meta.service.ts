/** Who a token belongs to: its user, or the service user standing for a team or organisation token. */
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { findUser } from "../users/users.d1";
import type { UserView } from "../users/users.serialize";

export async function accountDetails(caller: Caller): Promise<UserView> {
  const p = caller.principal;
  if (p.kind === "user") {
    const u = await findUser(caller.db, p.userId);
    // The token outlived its user.
    if (!u) throw ApiError.of("unauthorized");
    return { ...u, isService: false, authenticated: { id: u.id, type: "users" } };
  }
  // A run token is no account (account/details is not among the routes it may call).
  if (p.kind === "run") throw ApiError.of("not_found");
  const authenticated = p.kind === "team" ? { id: p.teamId, type: "teams" } : { id: p.organization, type: "organizations" };
  const username = p.kind === "team" ? `api-${p.teamId}` : `api-org-${p.organization}`;
  return { id: p.serviceUserId, username, email: null, isSiteAdmin: false, isService: true, authenticated, unconfirmedEmail: null };
}
