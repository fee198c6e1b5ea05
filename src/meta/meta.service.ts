/** Who a token belongs to: its user, or the service user standing for a team or organisation token. */
import type { Caller } from "../caller";
import { ApiError } from "../errors";
import { findAccount } from "./meta.d1";

export interface Account {
  id: string;
  username: string;
  email: string | null;
  isSiteAdmin: boolean;
  isService: boolean;
  authenticated: { id: string; type: string };
  unconfirmedEmail: string | null;
}

export async function accountDetails(caller: Caller): Promise<Account> {
  const p = caller.principal;
  if (p.kind === "user") {
    const u = await findAccount(caller.db, p.userId);
    // The token outlived its user.
    if (!u) throw ApiError.of("unauthorized");
    const authenticated = { id: u.id, type: "users" };
    return {
      id: u.id,
      username: u.username,
      email: u.email,
      isSiteAdmin: u.is_site_admin === 1,
      isService: false,
      authenticated,
      unconfirmedEmail: u.unconfirmed_email ?? null,
    };
  }
  const authenticated = p.kind === "team" ? { id: p.teamId, type: "teams" } : { id: p.organization, type: "organizations" };
  const username = p.kind === "team" ? `api-${p.teamId}` : `api-org-${p.organization}`;
  return { id: p.serviceUserId, username, email: null, isSiteAdmin: false, isService: true, authenticated, unconfirmedEmail: null };
}
