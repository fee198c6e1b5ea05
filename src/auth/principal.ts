/**
 * Who is calling, resolved from the bearer token. A team or organisation token belongs to its organisation by the
 * organisation's immutable id (`organizationId`, what authorisation compares); `organization` is the organisation's
 * name when the token was resolved, for display only (a rename may change it at any time).
 */
export type Principal =
  | {
      kind: "user";
      userId: string;
      username: string;
      isSiteAdmin: boolean;
      tokenId: string | null;
      /** When the user's token was created (its organisations' token TTL policies count from it); absent: ADMIN_TOKEN. */
      tokenCreatedAt?: string;
      /**
       * A web UI session's start and last request: organisations' `session-remember` and `session-timeout` apply to it.
       * `method`: how it was started (a pasted token, a password, or single sign-on: organisations with `sso-required`
       * refuse their members' password sessions).
       */
      session?: { createdAt: string; lastSeenAt: string; method?: SessionMethod };
      /** The user has a confirmed authenticator (src/two-factor/): organisations with `two_factor_mandatory` admit it. */
      twoFactor?: boolean;
    }
  | { kind: "team"; teamId: string; organizationId: string; organization: string; serviceUserId: string; tokenId: string }
  | {
      kind: "organization";
      organizationId: string;
      organization: string;
      serviceUserId: string;
      tokenId: string;
      /** The organisation's audit-trails token: it reads the audit trail and nothing else (src/auth/auth.middleware.ts). */
      auditTrailsOnly?: true;
    }
  /**
   * The run token of one claimed job (src/auth/run-token.ts): its own workspace's state, variables and lock, and
   * its organisation's entitlements; nothing else. Resolved from the token's signature, never from a table.
   */
  | ({ kind: "run" } & RunClaim);

/** What a run token names: one claimed job of one run (src/auth/run-token.ts). */
export interface RunClaim {
  runId: string;
  workspaceId: string;
  organizationId: string;
  /** The run phase the token was minted for (a run's `plan` or `apply` job). */
  phase: "plan" | "apply";
  claimId: string;
  /** The run's workspace's project when its phase was claimed (project remote state sharing); absent in older tokens. */
  projectId?: string;
}

/** How a web UI session was started. */
export type SessionMethod = "token" | "password" | "sso";

/** The resource a lock is held by, in the types clients accept there (users, teams, runs). */
export function lockHolderOf(p: Principal): { type: "users" | "teams" | "runs"; id: string } {
  switch (p.kind) {
    case "user":
      return { type: "users", id: p.userId };
    case "team":
      return { type: "teams", id: p.teamId };
    case "organization":
      // The real service models organisation tokens as a service user.
      return { type: "users", id: p.serviceUserId };
    case "run":
      // The run holds its workspace's lock while it is active (docs/runs.md).
      return { type: "runs", id: p.runId };
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
    case "run":
      return p.runId;
  }
}

/**
 * The user a token acts as: its user, or the service user standing for a team or organisation token. A run token
 * acts for no user (null): what it creates names its run instead.
 */
export function actingUserId(p: Principal): string | null {
  switch (p.kind) {
    case "user":
      return p.userId;
    case "team":
    case "organization":
      return p.serviceUserId;
    case "run":
      return null;
  }
}
