import type { WorkspaceObject } from "./workspaces/workspace.object";
import type { Principal } from "./auth/principal";

/** Bindings of the Worker (wrangler.toml, secrets and vars). */
export interface Bindings {
  DB: D1Database;
  WORKSPACES: DurableObjectNamespace<WorkspaceObject>;
  /** Site-admin token (a wrangler secret in production, `.dev.vars` locally). */
  ADMIN_TOKEN?: string;
  /** "self-hosted" (default) or "hosted". */
  EDITION?: string;
  /** Engine version a workspace gets when created without one. */
  LATEST_ENGINE_VERSION?: string;
  /** HMAC key for the signed state-blob URLs. */
  BLOB_SIGNING_KEY?: string;
  /** Secret the AES-GCM key of stored variable values is derived from (issue 17). */
  VARIABLES_ENCRYPTION_KEY?: string;
  /** Requests per second per user; "0" disables rate limiting. */
  RATE_LIMIT?: string;
  /** "1" enables the test-only fault-injection hooks. Never set in production. */
  FAULT_INJECTION?: string;
}

export interface Variables {
  principal: Principal;
  requestId: string;
}

export type AppEnv = { Bindings: Bindings; Variables: Variables };

export type Edition = "self-hosted" | "hosted";

export function edition(env: Bindings): Edition {
  return env.EDITION === "hosted" ? "hosted" : "self-hosted";
}
