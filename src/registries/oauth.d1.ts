/** D1 statements for OAuth clients and their OAuth tokens (no secret is ever stored). */
import type { Db } from "../caller";

export interface ClientRow {
  id: string;
  organization_id: string;
  attrs: string;
  created_at: string;
}

export interface TokenRow {
  id: string;
  oauth_client_id: string;
  organization_id: string;
  service_provider_user: string | null;
  created_at: string;
  /** Whether a private SSH key was set (the key itself is never kept). */
  has_ssh_key?: number;
}

export async function findClient(db: Db, id: string): Promise<ClientRow | null> {
  return db.prepare("SELECT * FROM oauth_clients WHERE id = ?").bind(id).first<ClientRow>();
}

export async function findToken(db: Db, id: string): Promise<TokenRow | null> {
  return db.prepare("SELECT * FROM oauth_tokens WHERE id = ?").bind(id).first<TokenRow>();
}

export async function listClients(db: Db, organizationId: string): Promise<ClientRow[]> {
  return (await db.prepare("SELECT * FROM oauth_clients WHERE organization_id = ? ORDER BY created_at, id").bind(organizationId).all<ClientRow>()).results;
}

export async function tokensOf(db: Db, clientId: string): Promise<TokenRow[]> {
  return (await db.prepare("SELECT * FROM oauth_tokens WHERE oauth_client_id = ? ORDER BY created_at").bind(clientId).all<TokenRow>()).results;
}

export async function listOrgTokens(db: Db, organizationId: string): Promise<TokenRow[]> {
  return (await db.prepare("SELECT * FROM oauth_tokens WHERE organization_id = ? ORDER BY created_at, id").bind(organizationId).all<TokenRow>()).results;
}

/** A client and its one token, in one batch. */
export async function insertClientWithToken(db: Db, client: ClientRow, token: TokenRow): Promise<void> {
  await db.batch([
    db
      .prepare("INSERT INTO oauth_clients (id, organization_id, attrs, created_at) VALUES (?, ?, ?, ?)")
      .bind(client.id, client.organization_id, client.attrs, client.created_at),
    db
      .prepare("INSERT INTO oauth_tokens (id, oauth_client_id, organization_id, service_provider_user, created_at) VALUES (?, ?, ?, ?, ?)")
      .bind(token.id, token.oauth_client_id, token.organization_id, null, token.created_at),
  ]);
}

/** Merged in SQL (a null removes the key, which reads back as null) so concurrent PATCHes both land; null when gone. */
export async function patchClientAttrs(db: Db, id: string, attrs: Record<string, unknown>): Promise<ClientRow | null> {
  return db.prepare("UPDATE oauth_clients SET attrs = json_patch(attrs, ?) WHERE id = ? RETURNING *").bind(JSON.stringify(attrs), id).first<ClientRow>();
}

/** Records that the token has (or no longer has) a private SSH key; null when the token is gone. */
export async function setTokenSshKey(db: Db, id: string, has: boolean): Promise<TokenRow | null> {
  return db
    .prepare("UPDATE oauth_tokens SET has_ssh_key = ? WHERE id = ? RETURNING *")
    .bind(has ? 1 : 0, id)
    .first<TokenRow>();
}

/** False when the token was already gone. */
export async function deleteToken(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM oauth_tokens WHERE id = ?").bind(id).run()).meta.changes > 0;
}

export async function deleteClient(db: Db, id: string): Promise<void> {
  await db.batch([db.prepare("DELETE FROM oauth_tokens WHERE oauth_client_id = ?").bind(id), db.prepare("DELETE FROM oauth_clients WHERE id = ?").bind(id)]);
}
