/** D1 statements for OAuth clients and their OAuth tokens (the token string only sealed; no other secret is stored). */
import type { Db } from "../caller";

interface ClientRow {
  id: string;
  organization_id: string;
  attrs: string;
  created_at: string;
}

interface TokenRow {
  id: string;
  oauth_client_id: string;
  organization_id: string;
  service_provider_user: string | null;
  created_at: string;
  has_ssh_key: number;
}

export interface OAuthClient {
  id: string;
  organizationId: string;
  /** Its public attributes as sent (secrets are never stored), and `agent-pool-id`. */
  attrs: Record<string, unknown>;
  createdAt: string;
}

export interface OAuthToken {
  id: string;
  oauthClientId: string;
  organizationId: string;
  serviceProviderUser: string | null;
  createdAt: string;
  /** Whether a private SSH key was set (the key itself is never kept). */
  hasSshKey: boolean;
}

function toClient(row: ClientRow): OAuthClient {
  return { id: row.id, organizationId: row.organization_id, attrs: JSON.parse(row.attrs) as Record<string, unknown>, createdAt: row.created_at };
}

function toToken(row: TokenRow): OAuthToken {
  return {
    id: row.id,
    oauthClientId: row.oauth_client_id,
    organizationId: row.organization_id,
    serviceProviderUser: row.service_provider_user,
    createdAt: row.created_at,
    hasSshKey: row.has_ssh_key === 1,
  };
}

export async function findClient(db: Db, id: string): Promise<OAuthClient | null> {
  const row = await db.prepare("SELECT * FROM oauth_clients WHERE id = ?").bind(id).first<ClientRow>();
  return row ? toClient(row) : null;
}

export async function findToken(db: Db, id: string): Promise<OAuthToken | null> {
  const row = await db.prepare("SELECT * FROM oauth_tokens WHERE id = ?").bind(id).first<TokenRow>();
  return row ? toToken(row) : null;
}

export async function listClients(db: Db, organizationId: string): Promise<OAuthClient[]> {
  const rows = await db.prepare("SELECT * FROM oauth_clients WHERE organization_id = ? ORDER BY created_at, id").bind(organizationId).all<ClientRow>();
  return rows.results.map(toClient);
}

export async function tokensOf(db: Db, clientId: string): Promise<OAuthToken[]> {
  return (await db.prepare("SELECT * FROM oauth_tokens WHERE oauth_client_id = ? ORDER BY created_at").bind(clientId).all<TokenRow>()).results.map(toToken);
}

export async function listOrgTokens(db: Db, organizationId: string): Promise<OAuthToken[]> {
  const rows = await db.prepare("SELECT * FROM oauth_tokens WHERE organization_id = ? ORDER BY created_at, id").bind(organizationId).all<TokenRow>();
  return rows.results.map(toToken);
}

/** A client, its one token and the projects it is attached to, in one batch. */
export async function insertClientWithToken(
  db: Db,
  client: OAuthClient,
  token: OAuthToken,
  projectIds: string[] = [],
  tokenSealed: string | null = null,
): Promise<void> {
  await db.batch([
    db
      .prepare("INSERT INTO oauth_clients (id, organization_id, attrs, created_at) VALUES (?, ?, ?, ?)")
      .bind(client.id, client.organizationId, JSON.stringify(client.attrs), client.createdAt),
    db
      .prepare("INSERT INTO oauth_tokens (id, oauth_client_id, organization_id, service_provider_user, created_at, token_sealed) VALUES (?, ?, ?, ?, ?, ?)")
      .bind(token.id, token.oauthClientId, token.organizationId, null, token.createdAt, tokenSealed),
    ...projectIds.map((p) => attachStatement(db, client.id, p, client.createdAt)),
  ]);
}

/** Merged in SQL (a null removes the key, which reads back as null) so concurrent PATCHes both land; null when gone. */
export async function patchClientAttrs(db: Db, id: string, attrs: Record<string, unknown>): Promise<OAuthClient | null> {
  const row = await db
    .prepare("UPDATE oauth_clients SET attrs = json_patch(attrs, ?) WHERE id = ? RETURNING *")
    .bind(JSON.stringify(attrs), id)
    .first<ClientRow>();
  return row ? toClient(row) : null;
}

/** Records that the token has (or no longer has) a private SSH key; null when the token is gone. */
export async function setTokenSshKey(db: Db, id: string, has: boolean): Promise<OAuthToken | null> {
  const row = await db
    .prepare("UPDATE oauth_tokens SET has_ssh_key = ? WHERE id = ? RETURNING *")
    .bind(has ? 1 : 0, id)
    .first<TokenRow>();
  return row ? toToken(row) : null;
}

/** False when the token was already gone. */
export async function deleteToken(db: Db, id: string): Promise<boolean> {
  return (await db.prepare("DELETE FROM oauth_tokens WHERE id = ?").bind(id).run()).meta.changes > 0;
}

export async function deleteClient(db: Db, id: string): Promise<void> {
  await db.batch([db.prepare("DELETE FROM oauth_tokens WHERE oauth_client_id = ?").bind(id), db.prepare("DELETE FROM oauth_clients WHERE id = ?").bind(id)]);
}

// ---- the projects a client is attached to (migration 0019) ----

/**
 * Each client's token ids (its `oauth-tokens` relationship, oldest first) and attached project ids (its `projects`
 * relationship, oldest attachment first): one batch for a whole page of clients.
 */
export async function relationsOf(db: Db, clientIds: string[]): Promise<Map<string, { tokenIds: string[]; projectIds: string[] }>> {
  const out = new Map(clientIds.map((id) => [id, { tokenIds: [] as string[], projectIds: [] as string[] }]));
  if (clientIds.length === 0) return out;
  const ids = JSON.stringify(clientIds);
  const [tokens, projects] = await db.batch([
    db.prepare("SELECT oauth_client_id, id FROM oauth_tokens WHERE oauth_client_id IN (SELECT value FROM json_each(?)) ORDER BY created_at").bind(ids),
    db
      .prepare(
        "SELECT oauth_client_id, project_id AS id FROM oauth_client_projects WHERE oauth_client_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, project_id",
      )
      .bind(ids),
  ]);
  for (const r of (tokens?.results ?? []) as { oauth_client_id: string; id: string }[]) out.get(r.oauth_client_id)?.tokenIds.push(r.id);
  for (const r of (projects?.results ?? []) as { oauth_client_id: string; id: string }[]) out.get(r.oauth_client_id)?.projectIds.push(r.id);
  return out;
}

/** Which of `ids` are projects of the organisation. */
export async function organizationProjectIds(db: Db, organizationId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await db
    .prepare("SELECT id FROM projects WHERE organization_id = ? AND id IN (SELECT value FROM json_each(?))")
    .bind(organizationId, JSON.stringify(ids))
    .all<{ id: string }>();
  return new Set(found.results.map((f) => f.id));
}

/**
 * Attaches only while the project and the client exist in one organisation (a concurrent delete of either wins); an
 * attached project stays as it was.
 */
function attachStatement(db: Db, clientId: string, projectId: string, at: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO oauth_client_projects (oauth_client_id, project_id, created_at)
       SELECT ?, ?, ? WHERE EXISTS (
         SELECT 1 FROM projects p JOIN oauth_clients c ON c.organization_id = p.organization_id WHERE p.id = ? AND c.id = ?)
       ON CONFLICT (oauth_client_id, project_id) DO NOTHING`,
    )
    .bind(clientId, projectId, at, projectId, clientId);
}

export async function attachProjects(db: Db, clientId: string, projectIds: string[], at: string): Promise<void> {
  if (projectIds.length) await db.batch(projectIds.map((p) => attachStatement(db, clientId, p, at)));
}

export async function detachProjects(db: Db, clientId: string, projectIds: string[]): Promise<void> {
  if (projectIds.length === 0) return;
  await db
    .prepare("DELETE FROM oauth_client_projects WHERE oauth_client_id = ? AND project_id IN (SELECT value FROM json_each(?))")
    .bind(clientId, JSON.stringify(projectIds))
    .run();
}

/** Makes the client's projects exactly `projectIds` (PATCH's `relationships.projects`; `[]` clears), in one batch. */
export async function replaceProjects(db: Db, clientId: string, projectIds: string[], at: string): Promise<void> {
  await db.batch([
    db
      .prepare("DELETE FROM oauth_client_projects WHERE oauth_client_id = ? AND project_id NOT IN (SELECT value FROM json_each(?))")
      .bind(clientId, JSON.stringify(projectIds)),
    ...projectIds.map((p) => attachStatement(db, clientId, p, at)),
  ]);
}

/** Replaces the sealed token string of every token of the client (a PATCH's new `oauth-token-string`). */
export async function setClientTokenSealed(db: Db, clientId: string, seal: (tokenId: string) => Promise<string>): Promise<void> {
  const { results } = await db.prepare("SELECT id FROM oauth_tokens WHERE oauth_client_id = ?").bind(clientId).all<{ id: string }>();
  const statements = await Promise.all(
    results.map(async (r) => db.prepare("UPDATE oauth_tokens SET token_sealed = ? WHERE id = ?").bind(await seal(r.id), r.id)),
  );
  if (statements.length) await db.batch(statements);
}

/** What the service needs to act on the VCS host through a token: its client's provider and URLs, the sealed string. */
export interface TokenConnection {
  tokenId: string;
  organizationId: string;
  serviceProvider: string;
  apiUrl: string | null;
  httpUrl: string | null;
  tokenSealed: string | null;
}

export async function tokenConnection(db: Db, tokenId: string): Promise<TokenConnection | null> {
  const row = await db
    .prepare(`SELECT t.id, t.organization_id, t.token_sealed, c.attrs FROM oauth_tokens t JOIN oauth_clients c ON c.id = t.oauth_client_id WHERE t.id = ?`)
    .bind(tokenId)
    .first<{ id: string; organization_id: string; token_sealed: string | null; attrs: string }>();
  if (!row) return null;
  const attrs = JSON.parse(row.attrs) as Record<string, unknown>;
  const str = (k: string) => (typeof attrs[k] === "string" && attrs[k] !== "" ? (attrs[k] as string) : null);
  return {
    tokenId: row.id,
    organizationId: row.organization_id,
    serviceProvider: str("service-provider") ?? "",
    apiUrl: str("api-url"),
    httpUrl: str("http-url"),
    tokenSealed: row.token_sealed,
  };
}
