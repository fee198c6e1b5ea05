/**
 * `terraform login`: approving an authorization request (a one-time code for the signed-in user) and exchanging the
 * code for a new user API token, minted by the tokens service as `POST /users/:id/authentication-tokens` mints one.
 */
import { signInStatement } from "../audit/audit.d1";
import type { Principal } from "../auth/principal";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import type { Bindings } from "../env";
import { ok } from "../errors";
import { randomBase62, sha256Hex } from "../ids";
import { createUserToken } from "../tokens/tokens.service";
import { findUser } from "../users/users.d1";
import { approvingSessionStands, insertLoginCode, takeLoginCode } from "./login.d1";
import { type AuthorizeRequest, callbackUrl, LOGIN_CLIENT_ID, LOGIN_CODE_TTL_MS, verifierMatches } from "./login.rules";

/**
 * Approves the request for the signed-in user: the callback URL carrying a new one-time code and the state. `session`:
 * the approving UI session's id, which must still stand when the code is exchanged.
 */
export async function approveLogin(caller: Caller, request: AuthorizeRequest, session: string): Promise<string> {
  // A code stands for a user: team and organisation tokens cannot log Terraform in as anyone.
  authorize(caller, "user", {});
  const p = caller.principal as Extract<Principal, { kind: "user" }>;
  const code = randomBase62(43);
  const now = Date.now();
  await insertLoginCode(
    caller.db,
    {
      codeHash: await sha256Hex(code),
      userId: p.userId,
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      sessionHash: await sha256Hex(session),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + LOGIN_CODE_TTL_MS).toISOString(),
    },
    new Date(now).toISOString(),
  );
  return callbackUrl(request.redirectUri, { code, state: request.state });
}

/** Denial: the callback URL with `access_denied` (the request was checked, so the URI is safe). */
export function denyLogin(request: AuthorizeRequest): string {
  return callbackUrl(request.redirectUri, { error: "access_denied", state: request.state });
}

export type OAuthErrorCode = "invalid_request" | "invalid_client" | "invalid_grant" | "unsupported_grant_type";
export type Exchange = { ok: true; token: string } | { ok: false; error: OAuthErrorCode; description: string };

const refuse = (error: OAuthErrorCode, description: string): Exchange => ({ ok: false, error, description });

/**
 * The token endpoint's exchange (RFC 6749 §4.1.3 with RFC 7636). The request's shape and client are checked before
 * the code is touched; then the code is taken out of the table in one statement, so it is spent whatever follows
 * (a wrong verifier or redirect URI included: whoever holds a stolen code gets one try, and a replay none). The code
 * is good only while what approved it stands: its user, and the UI session that approved it.
 */
export async function exchangeLoginCode(env: Bindings, form: Record<string, string>): Promise<Exchange> {
  if (!form.grant_type) return refuse("invalid_request", "grant_type is required");
  if (form.grant_type !== "authorization_code") return refuse("unsupported_grant_type", "only authorization_code is supported");
  for (const k of ["code", "redirect_uri", "client_id", "code_verifier"]) {
    if (!form[k]) return refuse("invalid_request", `${k} is required`);
  }
  if (form.client_id !== LOGIN_CLIENT_ID) return refuse("invalid_client", "unknown client");
  if (form.code.length > 256) return refuse("invalid_grant", "the code is not valid");
  const db = env.DB.withSession("first-primary");
  const code = await takeLoginCode(db, await sha256Hex(form.code));
  if (!code) return refuse("invalid_grant", "the code is not valid or was already used");
  if (Date.parse(code.expiresAt) <= Date.now()) return refuse("invalid_grant", "the code has expired");
  if (code.clientId !== form.client_id) return refuse("invalid_grant", "the code was issued to another client");
  if (code.redirectUri !== form.redirect_uri) return refuse("invalid_grant", "redirect_uri does not match the authorization request");
  if (!(await verifierMatches(form.code_verifier, code.codeChallenge))) return refuse("invalid_grant", "code_verifier does not match the code challenge");
  const user = await findUser(db, code.userId);
  if (!user) return refuse("invalid_grant", "the user who approved no longer exists");
  // What approving checked, checked again: the signed-in session that approved still stands (not signed out, not
  // ended by a new password, its token not revoked).
  const adminHash = env.ADMIN_TOKEN ? await sha256Hex(env.ADMIN_TOKEN) : null;
  if (!code.sessionHash || !(await approvingSessionStands(db, code.sessionHash, user.id, new Date().toISOString(), adminHash)))
    return refuse("invalid_grant", "the session that approved the code has ended");
  // The approving user mints its own token, through the service the API's endpoint calls.
  const caller: Caller = {
    env,
    principal: { kind: "user", userId: user.id, username: user.username, isSiteAdmin: user.isSiteAdmin, tokenId: null },
    db,
    near: env.DB.withSession("first-unconstrained"),
    authorized: new Set(),
  };
  const description = `terraform login on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`;
  // The sign-in is in the user's organisations' audit trails, in the batch that mints the token.
  const minted = await createUserToken(caller, user.id, ok({ attributes: { description } }), [signInStatement(db, user.id, "terraform_login", undefined)]);
  return { ok: true, token: minted.secret };
}
