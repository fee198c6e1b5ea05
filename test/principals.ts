// Test principals written straight into D1 (the rows the token and team endpoints write), so that
// permission-dependent tests do not depend on those endpoints.
import { env } from "cloudflare:workers";

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const rand = () => crypto.randomUUID().replace(/-/g, "").slice(0, 16);
const now = () => new Date().toISOString();

export interface TestPrincipal {
  token: string;
  id: string;
}

/** A user with a token; optionally a member of the organisation's owners team or of given teams. */
export async function makeUser(opts: { ownerOf?: string; teams?: string[]; expiredAt?: string } = {}): Promise<TestPrincipal> {
  const id = `user-${rand()}`;
  const token = `${rand()}.atlasv1.${rand()}${rand()}`;
  const stmts = [
    env.DB.prepare("INSERT INTO users (id, username, email, created_at) VALUES (?, ?, ?, ?)").bind(id, `u-${id}`, `${id}@example.com`, now()),
    env.DB.prepare("INSERT INTO tokens (id, token_hash, kind, user_id, created_at, expired_at) VALUES (?, ?, 'user', ?, ?, ?)").bind(
      `at-${rand()}`,
      await sha256Hex(token),
      id,
      now(),
      opts.expiredAt ?? null,
    ),
  ];
  if (opts.ownerOf) {
    stmts.push(
      env.DB.prepare(
        "INSERT INTO team_members (team_id, user_id) SELECT id, ? FROM teams WHERE organization_id = (SELECT external_id FROM organizations WHERE name = ?) AND is_owners = 1",
      ).bind(id, opts.ownerOf),
    );
  }
  for (const t of opts.teams ?? []) stmts.push(env.DB.prepare("INSERT INTO team_members (team_id, user_id) VALUES (?, ?)").bind(t, id));
  await env.DB.batch(stmts);
  return { token, id };
}

/** A team of the organisation with optional organisation access; returns its id and a team token. */
export async function makeTeam(org: string, organizationAccess: Record<string, boolean> = {}): Promise<TestPrincipal> {
  const id = `team-${rand()}`;
  const token = `${rand()}.atlasv1.${rand()}${rand()}`;
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO teams (id, organization_id, name, organization_access, service_user_id, created_at) VALUES (?, (SELECT external_id FROM organizations WHERE name = ?), ?, ?, ?, ?)",
    ).bind(id, org, `team-${rand()}`, JSON.stringify(organizationAccess), `user-${rand()}`, now()),
    env.DB.prepare(
      "INSERT INTO tokens (id, token_hash, kind, team_id, organization_id, created_at) VALUES (?, ?, 'team', ?, (SELECT external_id FROM organizations WHERE name = ?), ?)",
    ).bind(`at-${rand()}`, await sha256Hex(token), id, org, now()),
  ]);
  return { token, id };
}

export async function grantWorkspace(teamId: string, workspaceId: string, access: string, perms: Record<string, unknown> = {}): Promise<void> {
  await env.DB.prepare("INSERT INTO team_workspaces (id, team_id, workspace_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(`tws-${rand()}`, teamId, workspaceId, access, JSON.stringify(perms), now())
    .run();
}

export async function grantProject(teamId: string, projectId: string, access: string, perms: Record<string, unknown> = {}): Promise<void> {
  await env.DB.prepare("INSERT INTO team_projects (id, team_id, project_id, access, perms, created_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(`tprj-${rand()}`, teamId, projectId, access, JSON.stringify(perms), now())
    .run();
}

/** An organisation token (acts as the organisation's service user). */
export async function makeOrgToken(org: string): Promise<TestPrincipal> {
  const token = `${rand()}.atlasv1.${rand()}${rand()}`;
  const id = `at-${rand()}`;
  await env.DB.prepare(
    "INSERT INTO tokens (id, token_hash, kind, user_id, organization_id, created_at) VALUES (?, ?, 'organization', ?, (SELECT external_id FROM organizations WHERE name = ?), ?)",
  )
    .bind(id, await sha256Hex(token), `user-${rand()}`, org, now())
    .run();
  return { token, id };
}
