/** Who is calling, resolved from the bearer token. */
export type Principal =
  | { kind: "user"; userId: string; username: string; isSiteAdmin: boolean; tokenId: string | null }
  | { kind: "team"; teamId: string; organization: string; serviceUserId: string; tokenId: string }
  | { kind: "organization"; organization: string; serviceUserId: string; tokenId: string };

/** The resource a lock is held by, in the types clients accept there (users, teams, runs). */
export function lockHolderOf(p: Principal): { type: "users" | "teams"; id: string } {
  switch (p.kind) {
    case "user":
      return { type: "users", id: p.userId };
    case "team":
      return { type: "teams", id: p.teamId };
    case "organization":
      // The real service models organisation tokens as a service user.
      return { type: "users", id: p.serviceUserId };
  }
}

/** A stable id for logs and rate limiting (per user, not per token). */
export function principalKey(p: Principal): string {
  switch (p.kind) {
    case "user":
      return p.userId;
    case "team":
      return p.serviceUserId;
    case "organization":
      return p.serviceUserId;
  }
}
