/**
 * The rules of password sign-in that need no I/O: how long a link lives, and when repeated failures make a sign-in
 * wait. Failures are counted over a sliding window. A browser that signed in to an account before (a device cookie,
 * as OWASP's authentication cheat sheet recommends against lock-out abuse) has a budget of its own for that account,
 * which no other client's failures touch; every other client counts against the account's budget and its address's,
 * as before, so guessing gains nothing. An account's wait grows with each failure past the limit but is capped, and
 * never outlives the window: waiting, or a reset link, always gets a person back in.
 */

export const INVITATION_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const RESET_LINK_TTL_MS = 60 * 60 * 1000;
/** How long a browser stays known to an account after signing in to it (each sign-in renews it). */
export const DEVICE_TTL_MS = 90 * 24 * 60 * 60 * 1000;

/** The window failures are counted over. */
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;
/** Failures of one account within the window before its password sign-in waits. */
export const ACCOUNT_FAILURE_LIMIT = 5;
/** Failures from one client address within the window before its password sign-ins wait. */
export const ADDRESS_FAILURE_LIMIT = 20;
/** The first wait of an account at its limit; doubled by each further failure, up to `ACCOUNT_MAX_WAIT_MS`. */
const ACCOUNT_FIRST_WAIT_MS = 30 * 1000;
const ACCOUNT_MAX_WAIT_MS = 15 * 60 * 1000;

/** Failures within the window: how many, and the oldest and newest (ISO times; null when none). */
export interface FailureStats {
  count: number;
  first: string | null;
  last: string | null;
}

/** When an account (or a known browser of it) may try again (ms since the epoch), or null when it may try now. */
export function accountRetryAt(s: FailureStats, now: number): number | null {
  if (s.count < ACCOUNT_FAILURE_LIMIT || !s.last) return null;
  const wait = Math.min(ACCOUNT_FIRST_WAIT_MS * 2 ** (s.count - ACCOUNT_FAILURE_LIMIT), ACCOUNT_MAX_WAIT_MS);
  const at = Date.parse(s.last) + wait;
  return at > now ? at : null;
}

/** When a client address may try again, or null: once its oldest failure in the window has aged out of it. */
export function addressRetryAt(s: FailureStats, now: number): number | null {
  if (s.count < ADDRESS_FAILURE_LIMIT || !s.first) return null;
  const at = Date.parse(s.first) + FAILURE_WINDOW_MS;
  return at > now ? at : null;
}

/** The account key failures are counted under: the user's id when the login names one, else the login itself. */
export const accountKey = (userId: string | null, login: string) => (userId ? `user:${userId}` : `login:${login.toLowerCase()}`);

/** The key a known browser's own failures are counted under (passwords.d1.ts builds the same in SQL). */
export const deviceKey = (deviceHash: string, userId: string) => `device:${deviceHash}:${userId}`;
