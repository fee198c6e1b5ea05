/**
 * Passwords: signing in with one, and the one-time links that set one (an invitation's, made by whoever may invite;
 * a reset link, made by a site admin). The web UI calls these; there is no mail, so a link is shown once to the
 * person who made it, who sends it on.
 */
import { requireOrgAccess } from "../auth/access";
import { dummyPasswordHash, hashPassword, passwordProblems, verifyPassword } from "../auth/password";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { randomBase62, sha256Hex } from "../ids";
import { membershipById, type Membership } from "../users/memberships.d1";
import { findUser } from "../users/users.d1";
import {
  clearFailures,
  accountStanding,
  insertLink,
  linkByHash,
  liveInvitationLink,
  type PasswordLink,
  type PasswordUser,
  recordFailure,
  replacePasswordHash,
  signInFacts,
  useLink,
} from "./passwords.d1";
import { accountKey, accountRetryAt, addressRetryAt, FAILURE_WINDOW_MS, INVITATION_LINK_TTL_MS, RESET_LINK_TTL_MS } from "./passwords.rules";

const iso = (ms: number) => new Date(ms).toISOString();
const MAX_LOGIN_LENGTH = 254;

export type SignInOutcome = { ok: true; user: PasswordUser } | { ok: false; reason: "invalid" } | { ok: false; reason: "limited"; retryAt: number };

/**
 * Signs in with a username or e-mail address and a password. An unknown login, a user without a password and a wrong
 * password give the same answer, after the same work (one PBKDF2); a login or address over its failure limit waits
 * (`limited`), whether or not the account exists. `address`: the client's budget key.
 */
export async function signInWithPassword(env: Bindings, input: { login: string; password: string; address: string }, now = Date.now()): Promise<SignInOutcome> {
  const login = input.login.trim();
  if (login.length === 0 || login.length > MAX_LOGIN_LENGTH || input.password.length > 1024) return { ok: false, reason: "invalid" };
  const db = env.DB.withSession("first-primary");
  const since = iso(now - FAILURE_WINDOW_MS);
  const facts = await signInFacts(db, login, input.address, accountKey(null, login), since);
  const retryAt = Math.max(accountRetryAt(facts.account, now) ?? 0, addressRetryAt(facts.address, now) ?? 0);
  if (retryAt > 0) return { ok: false, reason: "limited", retryAt };
  const stored = facts.user?.passwordHash ?? (await dummyPasswordHash());
  const { ok, rehash } = await verifyPassword(input.password, stored);
  const key = accountKey(facts.user?.id ?? null, login);
  if (!ok || !facts.user?.passwordHash) {
    await recordFailure(db, [key, input.address], iso(now), since);
    return { ok: false, reason: "invalid" };
  }
  await clearFailures(db, key);
  // A hash made with fewer iterations than today's is replaced while the password is at hand.
  if (rehash) await replacePasswordHash(db, facts.user.id, stored, await hashPassword(input.password));
  return { ok: true, user: facts.user };
}

// ---- links ----

/** A new link's secret (only its SHA-256 is stored) and when it expires. */
export interface NewLink {
  secret: string;
  expiresAt: string;
}

/** The pending invitation a link may be made for, in the organisation named by the route (404 otherwise). */
async function invitationFor(caller: Caller, organization: string, membershipId: string): Promise<Membership> {
  const m = await membershipById(caller.db, membershipId);
  if (!m || m.organizationName.toLowerCase() !== organization.toLowerCase()) throw ApiError.of("not_found");
  const access = await requireOrgAccess(caller, { id: m.organizationId });
  authorize(caller, "membership.manage", { access });
  return m;
}

export interface InvitationLinkView {
  membership: Membership;
  /**
   * Why no link may be made for this invitation (null: one may): it was accepted, or its user's account is already
   * someone's (a password, a token, a membership, site admin), which an inviter must not be able to take over.
   */
  refusal: string | null;
  /** The current link, if one is unused and unexpired (its secret is never shown again). */
  live: { createdAt: string; expiresAt: string } | null;
}

/** An invitation as its link page shows it: inviters only (`membership.manage`). */
export async function showInvitationLink(caller: Caller, organization: string, membershipId: string, now = Date.now()): Promise<InvitationLinkView> {
  const membership = await invitationFor(caller, organization, membershipId);
  const [refusal, live] = await Promise.all([linkRefusal(caller, membership), liveInvitationLink(caller.db, membership.id, iso(now))]);
  return { membership, refusal, live };
}

/**
 * An invitation names an existing user when its address is one already: a link that set that user's password would
 * hand its account to whoever the inviter sends it to. So links are made only for accounts no one uses yet (created by
 * an invitation, or by a site admin and never used); anyone else signs in, or asks a site admin for a reset link.
 */
async function linkRefusal(caller: Caller, m: Membership): Promise<string | null> {
  if (m.status !== "invited") return "The invitation has already been accepted";
  const standing = await accountStanding(caller.db, m.userId);
  if (!standing) return "The invited user no longer exists";
  if (standing.hasPassword) return "The invited user already has a password: they sign in and accept the invitation";
  if (standing.inUse) return "The invited user already has an account: they sign in (a site admin can make them a reset link) and accept the invitation";
  return null;
}

/**
 * Makes the link of a pending invitation whose user's account no one uses yet (voiding any earlier one): it sets the
 * password, accepts the invitation and signs the user in. Inviters only (`membership.manage`).
 */
export async function invitationLink(caller: Caller, organization: string, membershipId: string, now = Date.now()): Promise<NewLink> {
  const m = await invitationFor(caller, organization, membershipId);
  const refusal = await linkRefusal(caller, m);
  if (refusal) throw ApiError.of("invalid_attribute", { detail: refusal, pointer: "/data/attributes/status" });
  return makeLink(caller, { userId: m.userId, kind: "invitation", membershipId: m.id }, INVITATION_LINK_TTL_MS, now);
}

/** Makes a reset link for any user (voiding its earlier unused reset links). Site admins only. */
export async function resetLink(caller: Caller, userId: string, now = Date.now()): Promise<NewLink & { username: string }> {
  authorize(caller, "site-admin");
  const user = await findUser(caller.db, userId);
  if (!user) throw ApiError.of("not_found");
  return { ...(await makeLink(caller, { userId, kind: "reset", membershipId: null }, RESET_LINK_TTL_MS, now)), username: user.username };
}

async function makeLink(
  caller: Caller,
  link: { userId: string; kind: "invitation" | "reset"; membershipId: string | null },
  ttlMs: number,
  now: number,
): Promise<NewLink> {
  const secret = randomBase62(43);
  const expiresAt = iso(now + ttlMs);
  const createdBy = caller.principal.kind === "user" ? caller.principal.userId : null;
  await insertLink(caller.db, { ...link, idHash: await sha256Hex(secret), createdBy, createdAt: iso(now), expiresAt }, iso(now - INVITATION_LINK_TTL_MS));
  return { secret, expiresAt };
}

/** What a link's secret stands for now. */
export type LinkState = { state: "valid"; link: PasswordLink } | { state: "used" | "expired" | "unknown" };

export async function passwordLinkState(env: Bindings, secret: string, now = Date.now()): Promise<LinkState> {
  if (secret.length === 0 || secret.length > 100) return { state: "unknown" };
  const link = await linkByHash(env.DB.withSession("first-primary"), await sha256Hex(secret));
  if (!link) return { state: "unknown" };
  if (link.usedAt) return { state: "used" };
  if (Date.parse(link.expiresAt) <= now) return { state: "expired" };
  return { state: "valid", link };
}

/**
 * Sets a password through a link: the link must be valid, the password meet the rules (422 with each reason
 * otherwise, the link left unused). Uses the link up. The caller then signs the user in (and accepts an invitation).
 */
export async function setPasswordWithLink(env: Bindings, secret: string, password: string, confirmation: string, now = Date.now()): Promise<LinkState> {
  const found = await passwordLinkState(env, secret, now);
  if (found.state !== "valid") return found;
  const problems = passwordProblems(password, confirmation);
  if (problems.length)
    throw new ApiError(
      422,
      problems.map((detail) => ({ status: "422", title: "invalid attribute", detail, source: { pointer: "/data/attributes/password" } })),
    );
  const hash = await hashPassword(password);
  // A racing use of the same link may have won meanwhile: then this one is told the link was used.
  if (!(await useLink(env.DB.withSession("first-primary"), await sha256Hex(secret), found.link.userId, hash, iso(now)))) return { state: "used" };
  return found;
}
