/**
 * The rules of two-factor authentication that need no I/O: TOTP codes (RFC 6238: SHA-1, 6 digits, 30 s steps, as
 * every authenticator app reads an `otpauth://` URI) through `otpauth`, and the shape of recovery codes.
 */
import { Secret, TOTP } from "otpauth";

export const TOTP_PERIOD_S = 30;
/** Steps either side of now a code may come from: a phone's clock a little off, a code typed as it turned over. */
const TOTP_WINDOW = 1;
/** How long the second step of a sign-in waits for its code. */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
export const RECOVERY_CODE_COUNT = 10;

/** A new authenticator secret (160 bits, RFC 4226's recommended length), as base32 text. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

const totpOf = (secret: string, label = "", issuer = "") => new TOTP({ issuer, label, secret: Secret.fromBase32(secret), period: TOTP_PERIOD_S });

/** The URI an authenticator app reads (the QR code's content), naming the service (`issuer`) and the account. */
export const otpauthUri = (secret: string, issuer: string, account: string): string => totpOf(secret, account, issuer).toString();

/** The time step of `code` when it matches within the window, else null. */
export function matchingStep(secret: string, code: string, nowMs: number): number | null {
  const token = code.replace(/\s+/g, "");
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(secret).validate({ token, timestamp: nowMs, window: TOTP_WINDOW });
  return delta === null ? null : Math.floor(nowMs / 1000 / TOTP_PERIOD_S) + delta;
}

/** Whether what was typed looks like a recovery code rather than a TOTP code. */
export const isRecoveryCode = (code: string): boolean => /^[a-z0-9]{5}-?[a-z0-9]{5}$/i.test(code.trim());

/** A recovery code as stored: lower case, without its dash. */
export const normalRecoveryCode = (code: string): string => code.trim().toLowerCase().replace("-", "");

const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

/** Fresh recovery codes, `xxxxx-xxxxx` (10 characters from 31: about 50 bits each). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = crypto.getRandomValues(new Uint8Array(10));
    const s = Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join("");
    return `${s.slice(0, 5)}-${s.slice(5)}`;
  });
}
