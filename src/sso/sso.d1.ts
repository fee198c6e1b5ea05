/** All SQL of single sign-on: the sign-ins under way (`sso_requests`), the identities (`sso_identities`), the mapping's teams. */
import type { Db } from "../caller";
import type { MappableTeam } from "./sso.rules";

export interface SsoRequest {
  state: string;
  codeVerifier: string;
  nonce: string;
  next: string | null;
}

/** A sign-in under way; expired ones go whenever another starts (the table only grows by sign-ins). */
export async function insertRequest(db: Db, idHash: string, r: SsoRequest, expiresAt: string, now: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM sso_requests WHERE expires_at <= ?").bind(now),
    db
      .prepare("INSERT INTO sso_requests (id_hash, state, code_verifier, nonce, next, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(idHash, r.state, r.codeVerifier, r.nonce, r.next, expiresAt),
  ]);
}

/** Takes a sign-in under way (it is used once, whatever the callback's outcome): null when unknown or expired. */
export async function takeRequest(db: Db, idHash: string, now: string): Promise<SsoRequest | null> {
  const row = await db
    .prepare("DELETE FROM sso_requests WHERE id_hash = ? RETURNING state, code_verifier, nonce, next, expires_at")
    .bind(idHash)
    .first<{ state: string; code_verifier: string; nonce: string; next: string | null; expires_at: string }>();
  if (!row || row.expires_at <= now) return null;
  return { state: row.state, codeVerifier: row.code_verifier, nonce: row.nonce, next: row.next };
}

/** The user an identity signs in (null: its first sign-in); its last sign-in recorded. */
export async function identityUser(db: Db, issuer: string, subject: string, now: string): Promise<string | null> {
  const row = await db
    .prepare("UPDATE sso_identities SET last_sign_in_at = ? WHERE issuer = ? AND subject = ? RETURNING user_id")
    .bind(now, issuer, subject)
    .first<{ user_id: string }>();
  return row?.user_id ?? null;
}

/**
 * A new user and its identity, in one batch: false when the username is taken (try the next), or when another
 * sign-in of the same identity created its user first (`identityUser` then finds it). The provider's e-mail is kept
 * as the user's address, unproven here: invitations attach only to proven addresses.
 */
export async function insertUserWithIdentity(
  db: Db,
  user: { id: string; username: string; email: string | null },
  identity: { issuer: string; subject: string },
  now: string,
): Promise<boolean> {
  const taken = await db.prepare("SELECT 1 FROM users WHERE username = ?").bind(user.username).first();
  if (taken) return false;
  try {
    await db.batch([
      db
        .prepare("INSERT INTO sso_identities (issuer, subject, user_id, created_at, last_sign_in_at) VALUES (?, ?, ?, ?, ?)")
        .bind(identity.issuer, identity.subject, user.id, now, now),
      db.prepare("INSERT INTO users (id, username, email, created_at) VALUES (?, ?, ?, ?)").bind(user.id, user.username, user.email, now),
    ]);
    return true;
  } catch (err) {
    if (String(err).includes("UNIQUE")) return false;
    throw err;
  }
}

interface MappableRow {
  id: string;
  organization_id: string;
  name: string;
  sso_team_id: string | null;
  is_owners: number;
}

const toMappable = (r: MappableRow): MappableTeam => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  ssoTeamId: r.sso_team_id,
  isOwners: r.is_owners === 1,
});

/**
 * In one batch: the teams of every organisation that one of `groups` names (by `sso-team-id` or name, compared
 * exactly: team names are otherwise compared without case), and the teams the user is in now.
 */
export async function mappingTeams(db: Db, userId: string, groups: string[]): Promise<{ candidates: MappableTeam[]; current: MappableTeam[] }> {
  const cols = "t.id, t.organization_id, t.name, t.sso_team_id, t.is_owners";
  const [candidates, current] = await db.batch<MappableRow>([
    db
      .prepare(
        `SELECT ${cols} FROM teams t WHERE t.sso_team_id IN (SELECT value FROM json_each(?1))
         OR t.name COLLATE BINARY IN (SELECT value FROM json_each(?1))`,
      )
      .bind(JSON.stringify(groups)),
    db.prepare(`SELECT ${cols} FROM teams t JOIN team_members m ON m.team_id = t.id WHERE m.user_id = ?`).bind(userId),
  ]);
  return { candidates: candidates!.results.map(toMappable), current: current!.results.map(toMappable) };
}
