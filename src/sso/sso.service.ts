/**
 * Single sign-on with the operator's OpenID Connect provider (OIDC_ISSUER): the authorization code flow with PKCE,
 * `state` and `nonce`, on oauth4webapi (a certified relying party that runs on Workers). The provider's answer is
 * checked by the library: the callback's `state` and `iss`, the code exchanged with the PKCE verifier, and the ID
 * token's signature (against the provider's JWKS), issuer, audience, expiry and nonce. The person is then the user
 * its identity (iss, sub) signs in, made at the first sign-in, and its teams follow its groups (src/sso/sso.rules.ts).
 * Every request to the provider goes through the outbound rules (src/platform/outbound.ts).
 */
import * as o from "oauth4webapi";
import type { Db } from "../caller";
import type { Bindings } from "../env";
import { newId, nowIso, randomBase62, sha256Hex } from "../ids";
import { OutboundError, outboundRefusal } from "../platform/outbound";
import { addMembers, removeMembers } from "../teams/teams.d1";
import { identityUser, insertRequest, insertUserWithIdentity, mappingTeams, takeRequest } from "./sso.d1";
import { baseUsername, groupsOf, membershipChanges, SSO_REQUEST_TTL_MS, type SsoConfig, ssoConfig, usernameCandidates } from "./sso.rules";

/** The provider's metadata lasts this long in an isolate (its JWKS is cached with it by oauth4webapi, for 5 minutes). */
const METADATA_TTL_MS = 10 * 60 * 1000;
const TIMEOUT_MS = 10_000;

const providers = new Map<string, { as: o.AuthorizationServer; at: number }>();

/** Forgets the providers' metadata and keys this isolate holds (tests that change provider between cases). */
export function forgetProviders(): void {
  providers.clear();
}

type ProviderOptions = { [o.customFetch]: typeof fetch; [o.allowInsecureRequests]?: boolean };

/** The library's requests, through the outbound rules and within a time limit; plain http only where the operator allows private addresses (local tests). */
function providerOptions(env: Bindings, self: string, issuer: string): ProviderOptions {
  const customFetch = ((url: string, init: RequestInit) => {
    const refused = outboundRefusal(env, url, self);
    if (refused) throw new OutboundError(`${url} is not requested: ${refused}`);
    return fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
  }) as unknown as typeof fetch;
  const insecure = env.OUTBOUND_ALLOW_PRIVATE === "1" && issuer.startsWith("http:");
  return { [o.customFetch]: customFetch, ...(insecure ? { [o.allowInsecureRequests]: true } : {}) };
}

/** The provider's metadata (discovery at `<issuer>/.well-known/openid-configuration`, its `issuer` checked). */
async function authorizationServer(env: Bindings, cfg: SsoConfig, self: string): Promise<o.AuthorizationServer> {
  const cached = providers.get(cfg.issuer);
  if (cached && Date.now() - cached.at < METADATA_TTL_MS) return cached.as;
  const issuer = new URL(cfg.issuer);
  const as = await o.processDiscoveryResponse(issuer, await o.discoveryRequest(issuer, { ...providerOptions(env, self, cfg.issuer), algorithm: "oidc" }));
  providers.set(cfg.issuer, { as, at: Date.now() });
  return as;
}

export const redirectUri = (origin: string) => `${origin}/app/sso/callback`;

/** Whether the operator configured single sign-on. */
export function ssoEnabled(env: Bindings): boolean {
  return ssoConfig(env) !== null;
}

export type SsoFailure = { ok: false; reason: "off" | "unavailable" | "gone" | "refused"; detail?: string };

/**
 * Starts a sign-in: the provider's authorization URL, and the browser's cookie that ties the callback to this start
 * (its hash keys the request's state, PKCE verifier and nonce). `next`: the page to return to, already checked.
 */
export async function startSignIn(env: Bindings, origin: string, next: string | null): Promise<{ ok: true; location: string; cookie: string } | SsoFailure> {
  const cfg = ssoConfig(env);
  if (!cfg) return { ok: false, reason: "off" };
  let as: o.AuthorizationServer;
  try {
    as = await authorizationServer(env, cfg, origin);
  } catch (err) {
    return { ok: false, reason: "unavailable", detail: messageOf(err) };
  }
  if (!as.authorization_endpoint) return { ok: false, reason: "unavailable", detail: "the provider's metadata has no authorization_endpoint" };
  const state = o.generateRandomState();
  const nonce = o.generateRandomNonce();
  const codeVerifier = o.generateRandomCodeVerifier();
  const cookie = randomBase62(43);
  const now = Date.now();
  await insertRequest(
    env.DB.withSession("first-primary"),
    await sha256Hex(cookie),
    { state, codeVerifier, nonce, next },
    new Date(now + SSO_REQUEST_TTL_MS).toISOString(),
    new Date(now).toISOString(),
  );
  const url = new URL(as.authorization_endpoint);
  // `groups` is asked for where the provider offers it as a scope (some list the claim only then).
  const scopes = ["openid", "profile", "email", ...(as.scopes_supported?.includes("groups") ? ["groups"] : [])];
  for (const [k, v] of Object.entries({
    client_id: cfg.clientId,
    redirect_uri: redirectUri(origin),
    response_type: "code",
    scope: scopes.join(" "),
    state,
    nonce,
    code_challenge: await o.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  }))
    url.searchParams.set(k, v);
  return { ok: true, location: url.toString(), cookie };
}

/**
 * Finishes a sign-in at the callback (`url`: the callback's full URL; `cookie`: the start's). The sign-in under way
 * is used up whatever happens. On success: the user signed in (made at its identity's first sign-in, its teams
 * following its groups) and the page to return to.
 */
export async function finishSignIn(
  env: Bindings,
  url: string,
  cookie: string | undefined,
): Promise<{ ok: true; userId: string; next: string | null } | SsoFailure> {
  const cfg = ssoConfig(env);
  if (!cfg) return { ok: false, reason: "off" };
  if (!cookie || cookie.length > 100) return { ok: false, reason: "gone" };
  const db = env.DB.withSession("first-primary");
  const request = await takeRequest(db, await sha256Hex(cookie), nowIso());
  if (!request) return { ok: false, reason: "gone" };
  const origin = new URL(url).origin;
  let claims: o.IDToken;
  try {
    const as = await authorizationServer(env, cfg, origin);
    const options = providerOptions(env, origin, cfg.issuer);
    const client: o.Client = { client_id: cfg.clientId };
    const auth = cfg.clientSecret ? o.ClientSecretBasic(cfg.clientSecret) : o.None();
    const params = o.validateAuthResponse(as, client, new URL(url), request.state);
    const response = await o.authorizationCodeGrantRequest(as, client, auth, params, redirectUri(origin), request.codeVerifier, options);
    const result = await o.processAuthorizationCodeResponse(as, client, response, { expectedNonce: request.nonce, requireIdToken: true });
    // The token came straight from the provider over TLS, which OpenID Connect accepts in place of its signature;
    // the signature is checked all the same, against the provider's published keys.
    await o.validateApplicationLevelSignature(as, response, options);
    const validated = o.getValidatedIdTokenClaims(result);
    if (!validated) return { ok: false, reason: "refused", detail: "the provider's answer had no ID token" };
    claims = validated;
  } catch (err) {
    return { ok: false, reason: "refused", detail: messageOf(err) };
  }
  const userId = await userOfIdentity(db, claims);
  const groups = groupsOf(claims as Record<string, unknown>, cfg.groupsClaim);
  if (groups) await followGroups(db, userId, groups, cfg.ownersGroup);
  return { ok: true, userId, next: request.next };
}

/** The user an identity signs in: the one made at its first sign-in, or a new one (named after its claims, made unique). */
async function userOfIdentity(db: Db, claims: o.IDToken): Promise<string> {
  const identity = { issuer: claims.iss, subject: claims.sub };
  const base = baseUsername(claims as Record<string, unknown>);
  const email = typeof claims.email === "string" && claims.email.length <= 254 ? claims.email : null;
  for (let round = 0; round < 5; round++) {
    const now = nowIso();
    const existing = await identityUser(db, identity.issuer, identity.subject, now);
    if (existing) return existing;
    const names = round === 0 ? usernameCandidates(base) : usernameCandidates(`${base}-${randomBase62(4).toLowerCase()}`, 5);
    for (const username of names) {
      const id = newId("user");
      if (await insertUserWithIdentity(db, { id, username, email }, identity, now)) return id;
      // Another sign-in of this identity made its user first: take that one.
      if (await identityUser(db, identity.issuer, identity.subject, now)) break;
    }
  }
  throw new Error("could not make a user for an SSO identity");
}

/** Makes the user's memberships of the teams the mapping manages exactly the teams its groups match. */
async function followGroups(db: Db, userId: string, groups: string[], ownersGroup: string | null): Promise<void> {
  const { candidates, current } = await mappingTeams(db, userId, groups);
  const { join, leave } = membershipChanges(groups, candidates, current, ownersGroup);
  const now = nowIso();
  for (const team of join) await addMembers(db, team, [{ userId, membershipId: newId("ou") }], now);
  // An owners team keeps one member: the mapping never empties it.
  for (const team of leave) await removeMembers(db, team, [userId], team.isOwners);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
