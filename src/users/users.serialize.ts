/** The `users` resource: a stored user, or the service user a team or organisation token acts as. */
import type { Resource } from "../jsonapi/document";
import type { User } from "./users.d1";

export interface UserView {
  id: string;
  username: string;
  email: string | null;
  isSiteAdmin: boolean;
  /** A team's or organisation token's service user (no users row). */
  isService: boolean;
  /** What the token authenticates as: the user itself, its team or its organisation. */
  authenticated: { id: string; type: string };
  /** An email change waiting for confirmation (see PATCH /account/update). */
  unconfirmedEmail: string | null;
  /** A stored user's two-factor authentication (src/two-factor/); none for service users. */
  twoFactor?: { enabled: boolean; verified: boolean };
}

export function serializeUser(u: UserView): Resource {
  const related =
    u.authenticated.type === "organizations" ? `/api/v2/organizations/${u.authenticated.id}` : `/api/v2/${u.authenticated.type}/${u.authenticated.id}`;
  return {
    id: u.id,
    type: "users",
    attributes: {
      username: u.username,
      "is-service-account": u.isService,
      "auth-method": "tfc",
      // A neutral placeholder image (no email hash is published); go-tfe expects a non-empty URL.
      "avatar-url": `https://www.gravatar.com/avatar/${u.id.replace(/[^A-Za-z0-9]/g, "")}?s=100&d=mm`,
      "two-factor": u.twoFactor ?? { enabled: false, verified: false },
      "v2-only": false,
      "is-site-admin": u.isSiteAdmin,
      "is-sso-login": false,
      email: u.email,
      "unconfirmed-email": u.unconfirmedEmail,
      permissions: { "can-create-organizations": !u.isService, "can-change-email": !u.isService, "can-change-username": !u.isService },
    },
    relationships: {
      "authentication-tokens": { links: { related: `/api/v2/users/${u.id}/authentication-tokens` } },
      "authenticated-resource": { data: u.authenticated, links: { related } },
    },
    links: { self: `/api/v2/users/${u.id}` },
  };
}

/** A stored user (a person, not a service user). */
export const serializeStoredUser = (u: User): Resource => serializeUser({ ...u, isService: false, authenticated: { id: u.id, type: "users" } });

/** A users row as an include shows it (it authenticates as itself; service users have rows too). */
export const serializeUserRow = (u: { id: string; username: string; email: string | null; isSiteAdmin: boolean; isServiceAccount: boolean }): Resource =>
  serializeUser({ ...u, isService: u.isServiceAccount, authenticated: { id: u.id, type: "users" }, unconfirmedEmail: null });
