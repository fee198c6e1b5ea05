/**
 * Two-factor authentication (TOTP, RFC 6238): a user enrols an authenticator (its secret shown while the enrolment is
 * pending, never after), confirms it with one code, and gets recovery codes once; password sign-in then asks for a
 * code (src/passwords/passwords.service.ts); a code or a recovery code disables it. The secret is sealed at rest as
 * variables' values are (src/variables/variables.crypto.ts), bound to its user.
 */
import { forgetPrincipal } from "../auth/principal-cache";
import { principalKeysOfUser } from "../auth/principal.d1";
import { authorize } from "../auth/requirements";
import type { Caller } from "../caller";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { sha256Hex } from "../ids";
import { failureStats, recordFailure, clearFailures } from "../passwords/passwords.d1";
import { accountKey, accountRetryAt, FAILURE_WINDOW_MS } from "../passwords/passwords.rules";
import { findUser } from "../users/users.d1";
import { openValue, sealValue } from "../variables/variables.crypto";
import {
  confirmAuthenticator,
  deleteAuthenticator,
  findAuthenticator,
  insertPendingAuthenticator,
  recoveryCodesLeft,
  spendStep,
  useRecoveryCode,
} from "./two-factor.d1";
import { isRecoveryCode, matchingStep, newRecoveryCodes, newTotpSecret, normalRecoveryCode, otpauthUri } from "./two-factor.rules";

const iso = (ms: number) => new Date(ms).toISOString();
/** The associated data a user's sealed secret is bound to: copied onto another user, it does not open. */
const sealedFor = (userId: string) => `two-factor:${userId}`;
const recoveryHash = (userId: string, code: string) => sha256Hex(`${userId}:${normalRecoveryCode(code)}`);
/** The issuer an authenticator app shows beside the account. */
const ISSUER = "Workspaces";

/**
 * This isolate forgets the cached principals of the user's tokens and sessions: whether it has two-factor
 * authentication changed, which organisations requiring it read. (Another isolate's cached principal follows on its
 * next recheck, src/auth/principal-cache.ts: one request at most.)
 */
async function forgetCached(db: D1DatabaseSession, userId: string): Promise<void> {
  for (const key of await principalKeysOfUser(db, userId)) forgetPrincipal(key);
}

/** The caller as a person with an account (user tokens and password sessions); 404 for anyone else. */
function userOf(caller: Caller): { userId: string; username: string } {
  authorize(caller, "user");
  const p = caller.principal;
  if (p.kind !== "user") throw ApiError.of("not_found");
  return { userId: p.userId, username: p.username };
}

export type TwoFactorStatus =
  | { state: "off" }
  /** Enrolment begun: the secret and its URI are shown until a code confirms them. */
  | { state: "pending"; secret: string; uri: string }
  | { state: "on"; recoveryCodesLeft: number };

export async function twoFactorStatus(caller: Caller): Promise<TwoFactorStatus> {
  const { userId, username } = userOf(caller);
  const a = await findAuthenticator(caller.db, userId);
  if (!a) return { state: "off" };
  if (a.confirmedAt) return { state: "on", recoveryCodesLeft: await recoveryCodesLeft(caller.db, userId) };
  const secret = await openValue(caller.env, sealedFor(userId), a.secretSealed);
  return { state: "pending", secret, uri: otpauthUri(secret, ISSUER, username) };
}

const alreadyOn = () => ApiError.of("invalid_attribute", { detail: "Two-factor authentication is already enabled", pointer: "/data/attributes/code" });
const wrongCode = () => ApiError.of("invalid_attribute", { detail: "That code is not valid", pointer: "/data/attributes/code" });

/** Begins (or begins again) enrolling an authenticator: a new secret, pending until a code confirms it. */
export async function beginEnrolment(caller: Caller, now = Date.now()): Promise<void> {
  const { userId } = userOf(caller);
  const sealed = await sealValue(caller.env, sealedFor(userId), newTotpSecret());
  if (!(await insertPendingAuthenticator(caller.db, userId, sealed, iso(now)))) throw alreadyOn();
}

/** Confirms the pending authenticator with one of its codes: the recovery codes, shown this once (only hashes are kept). */
export async function confirmEnrolment(caller: Caller, code: string, now = Date.now()): Promise<string[]> {
  const { userId } = userOf(caller);
  const a = await findAuthenticator(caller.db, userId);
  if (!a) throw ApiError.of("invalid_attribute", { detail: "Begin the enrolment first", pointer: "/data/attributes/code" });
  if (a.confirmedAt) throw alreadyOn();
  const step = matchingStep(await openValue(caller.env, sealedFor(userId), a.secretSealed), code, now);
  if (step === null || step <= a.lastStep) throw wrongCode();
  const codes = newRecoveryCodes();
  const hashes = await Promise.all(codes.map((c) => recoveryHash(userId, c)));
  if (!(await confirmAuthenticator(caller.db, userId, a.secretSealed, step, hashes, iso(now)))) throw wrongCode();
  await forgetCached(caller.db, userId);
  return codes;
}

/**
 * Whether `code` is a current code of the user's confirmed authenticator (each time step accepted once) or one of
 * its unused recovery codes (used up by this). Counts nothing: the caller keeps the failure budget.
 */
export async function checkSecondFactor(env: Bindings, db: D1DatabaseSession, userId: string, code: string, now = Date.now()): Promise<boolean> {
  if (code.length > 32) return false;
  const a = await findAuthenticator(db, userId);
  if (!a?.confirmedAt) return false;
  if (isRecoveryCode(code)) return useRecoveryCode(db, userId, await recoveryHash(userId, code), iso(now));
  const step = matchingStep(await openValue(env, sealedFor(userId), a.secretSealed), code, now);
  return step !== null && step > a.lastStep && (await spendStep(db, userId, a.secretSealed, step));
}

/**
 * Disables two-factor authentication with a code (or a recovery code), or abandons a pending enrolment. Wrong codes
 * spend the account's sign-in failure budget (src/passwords/passwords.rules.ts): guessing here gains nothing.
 */
export async function disableTwoFactor(caller: Caller, code: string, now = Date.now()): Promise<void> {
  const { userId } = userOf(caller);
  const a = await findAuthenticator(caller.db, userId);
  if (!a) return;
  if (a.confirmedAt) {
    const key = accountKey(userId, "");
    const since = iso(now - FAILURE_WINDOW_MS);
    const [stats] = await failureStats(caller.db, [key], since);
    const retryAt = accountRetryAt(stats!, now);
    if (retryAt) throw ApiError.of("rate_limited", { detail: `Too many wrong codes. Try again after ${iso(retryAt).slice(11, 19)} UTC.` });
    if (!(await checkSecondFactor(caller.env, caller.db, userId, code, now))) {
      await recordFailure(caller.db, [key], iso(now), since);
      throw wrongCode();
    }
    await clearFailures(caller.db, key);
  }
  await deleteAuthenticator(caller.db, userId);
  await forgetCached(caller.db, userId);
}

/** A site admin disables a user's two-factor authentication (the user lost its authenticator and its recovery codes). */
export async function adminDisableTwoFactor(caller: Caller, userId: string): Promise<void> {
  authorize(caller, "site-admin");
  if (!(await findUser(caller.db, userId))) throw ApiError.of("not_found");
  await deleteAuthenticator(caller.db, userId);
  await forgetCached(caller.db, userId);
}
