/**
 * `terraform login` (login.v1): the pure rules. Terraform's login command asks for an OAuth 2.0 authorization code
 * with PKCE (S256) as the client `terraform-cli`, listening for the answer on `http://localhost:<port>/login` with a
 * port of the advertised range; it then exchanges the code at the token endpoint. Nothing here does I/O but hashing.
 */

export const LOGIN_CLIENT_ID = "terraform-cli";
/** The callback ports Terraform may listen on (it picks one at random in this range), as HCP Terraform advertises. */
export const LOGIN_PORTS = [10000, 10010] as const;
export const AUTHORIZE_PATH = "/app/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
/** How long an approved code may wait for its exchange. */
export const LOGIN_CODE_TTL_MS = 5 * 60 * 1000;

/**
 * The login.v1 service as discovery advertises it. Terraform resolves relative URLs against the discovery document's
 * own URL (https://<host>/.well-known/terraform.json), so these work for any host the service is reached under.
 */
export function loginService() {
  return { client: LOGIN_CLIENT_ID, grant_types: ["authz_code"], authz: AUTHORIZE_PATH, token: TOKEN_PATH, ports: [...LOGIN_PORTS] };
}

/** A checked authorization request: safe to show, and `redirectUri` safe to redirect to. */
export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  state: string;
  codeChallenge: string;
}

/** Why an authorization request is refused; never answered by a redirect (see `checkAuthorizeRequest`). */
export type AuthorizeRefusal = { ok: false; reason: string };

/** `http://localhost:<port>/login` or `http://127.0.0.1:<port>/login`, port in range, written exactly so. */
export function isLoopbackRedirect(uri: string): boolean {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  const port = Number(u.port);
  return (
    u.protocol === "http:" &&
    (u.hostname === "localhost" || u.hostname === "127.0.0.1") &&
    u.port !== "" &&
    port >= LOGIN_PORTS[0] &&
    port <= LOGIN_PORTS[1] &&
    u.pathname === "/login" &&
    u.search === "" &&
    u.hash === "" &&
    u.username === "" &&
    u.password === "" &&
    // The exact form Terraform sends: nothing that only normalises to it.
    u.href === uri
  );
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** Printable ASCII without spaces (checked by code point: no control characters in a pattern). */
const isState = (s: string) => s.length > 0 && s.length <= 512 && [...s].every((ch) => ch.charCodeAt(0) > 0x20 && ch.charCodeAt(0) < 0x7f);

/**
 * Checks every parameter before anything is shown. A bad client or redirect URI must never be redirected to (that
 * would be an open redirect); the other faults are shown on the same error page, since the only client there is
 * cannot read an error from its callback anyway.
 */
export function checkAuthorizeRequest(q: Record<string, string | undefined>): { ok: true; value: AuthorizeRequest } | AuthorizeRefusal {
  if (q.client_id !== LOGIN_CLIENT_ID)
    return { ok: false, reason: `Unknown client "${(q.client_id ?? "").slice(0, 64)}": only Terraform CLI (terraform-cli) may ask.` };
  const redirectUri = q.redirect_uri ?? "";
  if (!isLoopbackRedirect(redirectUri)) {
    return {
      ok: false,
      reason: `The redirect URI must be http://localhost:<port>/login (or 127.0.0.1) with a port from ${LOGIN_PORTS[0]} to ${LOGIN_PORTS[1]}.`,
    };
  }
  if (q.response_type !== "code") return { ok: false, reason: 'The response type must be "code".' };
  if (q.code_challenge_method !== "S256" || !CHALLENGE.test(q.code_challenge ?? "")) {
    return { ok: false, reason: "A PKCE code challenge (S256) is required." };
  }
  if (!isState(q.state ?? "")) return { ok: false, reason: "A state parameter is required." };
  return { ok: true, value: { clientId: LOGIN_CLIENT_ID, redirectUri, state: q.state!, codeChallenge: q.code_challenge! } };
}

/** The redirect URI with the answer's parameters added. */
export function callbackUrl(redirectUri: string, params: Record<string, string>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.href;
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** RFC 7636 S256: base64url(SHA-256(verifier)) equals the challenge, compared in constant time. */
export async function verifierMatches(verifier: string, challenge: string): Promise<boolean> {
  if (!VERIFIER.test(verifier)) return false;
  const digest = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  if (digest.length !== challenge.length) return false;
  let diff = 0;
  for (let i = 0; i < digest.length; i++) diff |= digest.charCodeAt(i) ^ challenge.charCodeAt(i);
  return diff === 0;
}
