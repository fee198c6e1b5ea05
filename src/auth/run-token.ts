/**
 * The run token (docs/runs.md "The run token"): what an agent's Terraform authenticates with while it runs one phase
 * of one run. `run.<payload>.<signature>`: the payload base64url JSON `{r, w, o, p, c, x, j}` (run, workspace,
 * organisation, phase, claim, expiry in seconds, and the workspace's project when the phase was claimed), the signature HMAC-SHA256 over a domain-separated message with
 * `BLOB_SIGNING_KEY`. Stateless: nothing is stored; the auth middleware then reads the run's index row once (a final
 * or unknown run refuses it), and the job calls of the agent protocol check the claim in the workspace's object.
 */
import type { Bindings } from "../env";
import type { Principal, RunClaim } from "./principal";
import type { RunStandingRow } from "./principal.d1";

export type RunPrincipal = Extract<Principal, { kind: "run" }>;

/** The token outlives any lease renewal it is used under; the run ending (or the claim lost) stops it first. */
export const RUN_TOKEN_TTL_SECONDS = 24 * 60 * 60;

export const RUN_TOKEN_PREFIX = "run.";

/** Domain separation: blob URL signatures sign `GET\n…`/`PUT\n…` with the same key, never this prefix. */
const DOMAIN = "workspace-service/run-token/v1\n";

const encoder = new TextEncoder();
let cachedKey: { secret: string; key: CryptoKey } | null = null;

async function keyOf(env: Bindings): Promise<CryptoKey> {
  const secret = env.BLOB_SIGNING_KEY;
  if (!secret) throw new Error("BLOB_SIGNING_KEY is not configured");
  if (cachedKey?.secret === secret) return cachedKey.key;
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  cachedKey = { secret, key };
  return key;
}

function base64url(text: string): string {
  const bytes = encoder.encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

const toHex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

function fromHex(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export interface RunTokenClaims extends RunClaim {
  /** Expiry, seconds since the epoch. */
  expiresAt: number;
}

/** Mints the token of one claimed job (at claim time). */
export async function mintRunToken(env: Bindings, claims: RunClaim, nowSeconds = Math.floor(Date.now() / 1000)): Promise<string> {
  const payload = base64url(
    JSON.stringify({
      r: claims.runId,
      w: claims.workspaceId,
      o: claims.organizationId,
      p: claims.phase,
      c: claims.claimId,
      x: nowSeconds + RUN_TOKEN_TTL_SECONDS,
      ...(claims.projectId ? { j: claims.projectId } : {}),
    }),
  );
  const sig = await crypto.subtle.sign("HMAC", await keyOf(env), encoder.encode(DOMAIN + payload));
  return `${RUN_TOKEN_PREFIX}${payload}.${toHex(sig)}`;
}

const ID = /^[A-Za-z0-9_-]{1,80}$/;

/** The claims of a token whose signature holds and which has not expired, else null (no I/O). */
export async function verifyRunToken(env: Bindings, token: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<RunTokenClaims | null> {
  if (!token.startsWith(RUN_TOKEN_PREFIX) || token.length > 1024) return null;
  const parts = token.slice(RUN_TOKEN_PREFIX.length).split(".");
  if (parts.length !== 2) return null;
  const [payload, sigHex] = parts;
  const sig = fromHex(sigHex);
  if (!sig) return null;
  // crypto.subtle.verify compares in constant time.
  if (!(await crypto.subtle.verify("HMAC", await keyOf(env), sig, encoder.encode(DOMAIN + payload)))) return null;
  const json = fromBase64url(payload);
  if (json === null) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return null;
  }
  const c = raw as Record<string, unknown>;
  if (typeof c !== "object" || c === null) return null;
  const { r, w, o, p, x } = c;
  const claim = c.c;
  if (typeof r !== "string" || typeof w !== "string" || typeof o !== "string" || typeof claim !== "string") return null;
  if (![r, w, o, claim].every((v) => ID.test(v)) || (p !== "plan" && p !== "apply")) return null;
  if (typeof x !== "number" || !Number.isInteger(x) || x <= nowSeconds) return null;
  const j = c.j;
  if (j !== undefined && (typeof j !== "string" || !ID.test(j))) return null;
  return { runId: r, workspaceId: w, organizationId: o, phase: p, claimId: claim, expiresAt: x, ...(j === undefined ? {} : { projectId: j }) };
}

export function runPrincipalOf(claims: RunTokenClaims): RunPrincipal {
  return {
    kind: "run",
    runId: claims.runId,
    workspaceId: claims.workspaceId,
    organizationId: claims.organizationId,
    phase: claims.phase,
    claimId: claims.claimId,
    ...(claims.projectId ? { projectId: claims.projectId } : {}),
  };
}

/** Final run statuses (docs/runs.md "States"): a run token stops working once its run reaches one. */
const FINAL = new Set(["applied", "planned_and_finished", "discarded", "errored", "canceled", "force_canceled"]);

/** The principal when the run's index row (null: unknown run) still backs the token, else null. */
export function runStillStands(principal: RunPrincipal, row: RunStandingRow | null): RunPrincipal | null {
  if (!row || row.id !== principal.runId) return null;
  if (row.workspace_id !== principal.workspaceId || row.organization_id !== principal.organizationId) return null;
  return FINAL.has(row.status) ? null : principal;
}

/**
 * The API routes a run token may call (Hono's `METHOD path`): what Terraform on the agent calls with the `cloud` block
 * as its state store (never lock or unlock: the run holds the workspace's lock from start to end, and the agent runs
 * Terraform with `-lock=false`), the reads of its run, and the registry protocols, so a run installs its organisation's private
 * modules and providers as HCP's runs do (another organisation's namespace is not there for it: 404). Every other route answers 404 to it before its handler runs, whatever
 * its declared action would allow (listing the organisation's teams, say, needs only a standing there).
 */
const RUN_TOKEN_ROUTES = new Set([
  "GET /api/v2/ping",
  "GET /api/v2/organizations/:organization_name",
  "GET /api/v2/organizations/:organization_name/entitlement-set",
  "GET /api/v2/organizations/:organization_name/workspaces/:name",
  "GET /api/v2/workspaces/:workspace_id",
  "GET /api/v2/workspaces/:workspace_id/current-state-version",
  "GET /api/v2/workspaces/:workspace_id/current-state-version-outputs",
  "POST /api/v2/workspaces/:workspace_id/state-versions",
  "GET /api/v2/state-versions/:state_version_id",
  "GET /api/v2/state-versions/:state_version_id/outputs",
  "GET /api/v2/state-version-outputs/:output_id",
  "GET /api/v2/workspaces/:workspace_id/vars",
  "GET /api/v2/workspaces/:workspace_id/all-vars",
  "GET /api/registry/v1/modules/:namespace/:name/:provider/versions",
  "GET /api/registry/v1/modules/:namespace/:name/:provider/:version/download",
  "GET /api/registry/v1/modules/:namespace/:name/:provider/:version",
  "GET /api/registry/v1/providers/:namespace/:type/versions",
  "GET /api/registry/v1/providers/:namespace/:type/:version/download/:os/:arch",
]);

/**
 * Whether a run token may call the route (`declared`: its declared action). Besides the list, the routes reading
 * runs (`runs.read`), which hold only on the token's own workspace.
 */
export function runTokenMayCall(route: string, declared: string | undefined): boolean {
  return RUN_TOKEN_ROUTES.has(route) || (declared === "runs.read" && route.startsWith("GET "));
}
