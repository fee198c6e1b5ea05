/**
 * Passwords: signing in with one, and the one-time links that set one (an invitation's, made by whoever may invite;
 * a reset link, made by a site admin). The web UI calls these; there is no mail, so a link is shown once to the
 * person who made it, who sends it on.
 */
import { loadOrgAccess, requireOrgAccess } from "../auth/access";
import { principalOfToken } from "../auth/auth.middleware";
import { dummyPasswordHash, hashPassword, passwordProblems, verifyPassword } from "../auth/password";
import type { Principal } from "../auth/principal";
import { allows, authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { randomBase62, sha256Hex } from "../ids";
import { acceptInvitation } from "../users/memberships.service";
import { membershipById, type Membership } from "../users/memberships.d1";
import { findUser } from "../users/users.d1";
import { deleteChallenge, findChallenge, insertChallenge } from "../two-factor/two-factor.d1";
import { CHALLENGE_TTL_MS } from "../two-factor/two-factor.rules";
import { checkSecondFactor } from "../two-factor/two-factor.service";
import {
  accountStanding,
  clearFailures,
  failureStats,
  insertLink,
  linkByHash,
  linkMaker,
  liveInvitationLink,
  type PasswordLink,
  type PasswordUser,
  recordFailure,
  rememberDevice,
  replacePasswordHash,
  signInFacts,
  useLink,
} from "./passwords.d1";
import {
  accountKey,
  accountRetryAt,
  addressRetryAt,
  DEVICE_TTL_MS,
  deviceKey,
  FAILURE_WINDOW_MS,
  INVITATION_LINK_TTL_MS,
  RESET_LINK_TTL_MS,
} from "./passwords.rules";

const iso = (ms: number) => new Date(ms).toISOString();
const MAX_LOGIN_LENGTH = 254;
const DEVICE = /^[A-Za-z0-9]{43}$/;

/** A browser's device cookie after signing in: its value (only its SHA-256 is stored) and how long it lasts. */
export interface DeviceCookie {
  value: string;
  expiresAt: number;
}

export type SignInOutcome =
  | { ok: true; user: PasswordUser; device: DeviceCookie }
  /** The password was right and the user has two-factor authentication: no session yet, a code is owed (`challenge`: its cookie). */
  | { ok: false; reason: "second-factor"; challenge: string; expiresAt: number }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "limited"; retryAt: number };

/**
 * Signs in with a username or e-mail address and a password. An unknown login, a user without a password and a wrong
 * password give the same answer, after the same work (one PBKDF2). A browser that signed in to that user before
 * (`device`, its cookie) waits only for its own failures (`limited`); any other client waits while the account or its
 * address (`address`: the client's budget key) is over its limit, whether or not the account exists.
 */
export async function signInWithPassword(
  env: Bindings,
  input: { login: string; password: string; address: string; device?: string | null; next?: string | null },
  now = Date.now(),
): Promise<SignInOutcome> {
  const login = input.login.trim();
  if (login.length === 0 || login.length > MAX_LOGIN_LENGTH || input.password.length > 1024) return { ok: false, reason: "invalid" };
  const db = env.DB.withSession("first-primary");
  const since = iso(now - FAILURE_WINDOW_MS);
  const device = input.device && DEVICE.test(input.device) ? input.device : null;
  const deviceHash = device ? await sha256Hex(device) : null;
  const facts = await signInFacts(db, { login, addressKey: input.address, loginKey: accountKey(null, login), deviceHash, since, now: iso(now) });
  const retryAt = facts.device
    ? (accountRetryAt(facts.device, now) ?? 0)
    : Math.max(accountRetryAt(facts.account, now) ?? 0, addressRetryAt(facts.address, now) ?? 0);
  if (retryAt > 0) return { ok: false, reason: "limited", retryAt };
  const stored = facts.user?.passwordHash ?? (await dummyPasswordHash());
  const { ok, rehash } = await verifyPassword(input.password, stored);
  // A known browser's failures and successes are its own: they neither spend nor restore the account's budget.
  const key = facts.device && deviceHash && facts.user ? deviceKey(deviceHash, facts.user.id) : accountKey(facts.user?.id ?? null, login);
  if (!ok || !facts.user?.passwordHash) {
    await recordFailure(db, facts.device ? [key] : [key, input.address], iso(now), since);
    return { ok: false, reason: "invalid" };
  }
  // A hash made with fewer iterations than today's is replaced while the password is at hand.
  if (rehash) await replacePasswordHash(db, facts.user.id, stored, await hashPassword(input.password));
  if (facts.user.twoFactor) {
    // Nothing is cleared or remembered yet: the code's failures spend the same budget the password's did.
    const challenge = randomBase62(43);
    const expiresAt = now + CHALLENGE_TTL_MS;
    await insertChallenge(
      db,
      await sha256Hex(challenge),
      { userId: facts.user.id, failureKey: key, addressKey: facts.device ? null : input.address, next: input.next ?? null, expiresAt: iso(expiresAt) },
      iso(now),
    );
    return { ok: false, reason: "second-factor", challenge, expiresAt };
  }
  await clearFailures(db, key);
  return { ok: true, user: facts.user, device: await knownDevice(env, facts.user.id, device, now) };
}

export type SecondFactorOutcome =
  | { ok: true; userId: string; device: DeviceCookie; next: string | null }
  /** No such challenge, or it expired: sign in again. */
  | { ok: false; reason: "gone" }
  | { ok: false; reason: "invalid"; username: string }
  | { ok: false; reason: "limited"; retryAt: number; username: string };

/**
 * The second step of a password sign-in: a code of the user's authenticator, or one of its recovery codes (used up).
 * Rate limited as the password was, against the same budget (the known browser's, or the account's and the address's).
 */
export async function signInSecondFactor(
  env: Bindings,
  input: { challenge: string; code: string; device?: string | null },
  now = Date.now(),
): Promise<SecondFactorOutcome> {
  if (!input.challenge || input.challenge.length > 100) return { ok: false, reason: "gone" };
  const db = env.DB.withSession("first-primary");
  const idHash = await sha256Hex(input.challenge);
  const challenge = await findChallenge(db, idHash, iso(now));
  if (!challenge) return { ok: false, reason: "gone" };
  const since = iso(now - FAILURE_WINDOW_MS);
  const keys = challenge.addressKey ? [challenge.failureKey, challenge.addressKey] : [challenge.failureKey];
  const [account, address] = await failureStats(db, keys, since);
  const retryAt = Math.max(accountRetryAt(account!, now) ?? 0, address ? (addressRetryAt(address, now) ?? 0) : 0);
  if (retryAt > 0) return { ok: false, reason: "limited", retryAt, username: challenge.username };
  if (!(await checkSecondFactor(env, db, challenge.userId, input.code, now))) {
    await recordFailure(db, keys, iso(now), since);
    return { ok: false, reason: "invalid", username: challenge.username };
  }
  // A racing answer to the same challenge with another good code: one signs in.
  if (!(await deleteChallenge(db, idHash))) return { ok: false, reason: "gone" };
  await clearFailures(db, challenge.failureKey);
  return { ok: true, userId: challenge.userId, device: await knownDevice(env, challenge.userId, input.device, now), next: challenge.next };
}

/** Remembers the browser (its cookie, or a new one) as one that signed in to `userId`. */
export async function knownDevice(env: Bindings, userId: string, device: string | null | undefined, now = Date.now()): Promise<DeviceCookie> {
  const value = device && DEVICE.test(device) ? device : randomBase62(43);
  const expiresAt = now + DEVICE_TTL_MS;
  await rememberDevice(env.DB.withSession("first-primary"), await sha256Hex(value), userId, iso(expiresAt), iso(now));
  return { value, expiresAt };
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
 * An invitation's link sets the password of the account it names, so it is made only for the account created for
 * that invitation (no one had proven the address) while no one uses it: otherwise it would hand someone's account —
 * or an address someone proved — to whoever the inviter sends it to. Anyone else signs in (or asks a site admin for
 * a reset link) and accepts. Using the link checks all of this again (`useLink`).
 */
async function linkRefusal(caller: Caller, m: Membership): Promise<string | null> {
  if (m.status !== "invited") return "The invitation has already been accepted";
  const standing = await accountStanding(caller.db, m.id);
  if (!standing) return "The invited user no longer exists";
  if (standing.hasPassword) return "The invited user already has a password: they sign in and accept the invitation";
  if (standing.inUse) return "The invited user already has an account: they sign in (a site admin can make them a reset link) and accept the invitation";
  if (standing.proven || !standing.createdForIt)
    return "The invited user's account is not this invitation's own: they sign in (a site admin can make them a reset link) and accept the invitation";
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
  const p = caller.principal;
  const createdBy = p.kind === "user" ? p.userId : null;
  const createdByToken = p.kind === "user" || p.kind === "team" || p.kind === "organization" ? p.tokenId : null;
  await insertLink(
    caller.db,
    { ...link, idHash: await sha256Hex(secret), createdBy, createdByToken, createdAt: iso(now), expiresAt },
    iso(now - INVITATION_LINK_TTL_MS),
  );
  return { secret, expiresAt };
}

/**
 * What a link's secret stands for now. `void`: what it was checked for when made no longer holds — its invitation is
 * no longer pending, its account is used or not the invitation's own, or its maker may no longer make it.
 */
export type LinkState = { state: "valid"; link: PasswordLink } | { state: "used" | "expired" | "unknown" | "void" };

export async function passwordLinkState(env: Bindings, secret: string, now = Date.now()): Promise<LinkState> {
  if (secret.length === 0 || secret.length > 100) return { state: "unknown" };
  const db = env.DB.withSession("first-primary");
  const link = await linkByHash(db, await sha256Hex(secret));
  if (!link) return { state: "unknown" };
  if (link.usedAt) return { state: "used" };
  if (Date.parse(link.expiresAt) <= now) return { state: "expired" };
  return (await stillHolds(env, link)) ? { state: "valid", link } : { state: "void" };
}

/** Whatever making the link checked, checked again: its maker's right, and for an invitation's, the invitation and its account. */
async function stillHolds(env: Bindings, link: PasswordLink): Promise<boolean> {
  const db = env.DB.withSession("first-primary");
  const maker = await makerNow(db, link);
  if (!maker) return false;
  if (link.kind === "reset") return allows(maker, "site-admin");
  const m = link.membershipId ? await membershipById(db, link.membershipId) : null;
  if (!m || m.userId !== link.userId) return false;
  // A maker the organisation now refuses (its session settings, two-factor authentication required) may not make it.
  const access = await loadOrgAccess(db, maker, { id: m.organizationId }).catch((e) => {
    if (e instanceof ApiError) return null;
    throw e;
  });
  if (!access || !allows(maker, "membership.manage", { access })) return false;
  return (await linkRefusal({ env, principal: maker, db, near: db }, m)) === null;
}

/** The link's maker as authentication would see them now (null: their token or user is gone). */
async function makerNow(db: D1DatabaseSession, link: PasswordLink): Promise<Principal | null> {
  const found = await linkMaker(db, link);
  if (!found) return null;
  if ("token" in found) return principalOfToken(found.token);
  const u = found.user;
  return u ? { kind: "user", userId: u.id, username: u.username, isSiteAdmin: u.isSiteAdmin, tokenId: null, twoFactor: u.twoFactor } : null;
}

/**
 * Sets a password through a link: the link must be valid and still hold (`passwordLinkState`), the password meet the
 * rules (422 with each reason otherwise, the link left unused). Uses the link up — which ends every UI session of its
 * user (API tokens stay, as on the real service) — and accepts an invitation's invitation as its user. The caller
 * then signs the user in.
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
  const db = env.DB.withSession("first-primary");
  const adminHash = env.ADMIN_TOKEN ? await sha256Hex(env.ADMIN_TOKEN) : null;
  // A racing use of the same link may have won meanwhile (then this one is told the link was used), or the account
  // been used since the check above (then it is void: `useLink` checks the invitation's account again as it spends it).
  if (!(await useLink(db, await sha256Hex(secret), found.link.userId, hash, iso(now), adminHash))) {
    const after = await passwordLinkState(env, secret, now);
    return after.state === "valid" ? { state: "void" } : after;
  }
  const link = found.link;
  if (link.kind === "invitation" && link.membershipId) {
    // Accepted as the invited user, through the API's own accept (as POST /organization-memberships/:id/actions/accept).
    const principal: Principal = { kind: "user", userId: link.userId, username: link.username, isSiteAdmin: link.isSiteAdmin, tokenId: null };
    try {
      await acceptInvitation({ env, principal, db, near: db, authorized: new Set() }, link.membershipId);
    } catch (e) {
      // The invitation was withdrawn (or accepted) meanwhile: the password stands, and the user is signed in.
      if (!(e instanceof ApiError)) throw e;
    }
  }
  return found;
}
