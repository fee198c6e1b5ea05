// A store written by the code before organisation renames (rows and workspace records naming their
// organisation by name) keeps working after the upgrade: D1 migration 0016 turns every name into the organisation's
// id (the Durable Object's schema 6, which drops the name from its record, is tested in test/do/workspace.migrations.test.ts).
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { workspaceAccessRows } from "../../src/workspaces/workspaces.d1";
import type { Principal } from "../../src/auth/principal";
import { sha256Hex } from "../../src/ids";
import { updateOrganization } from "../../src/organizations/organizations.d1";
import { tokenByHash } from "../../src/auth/principal.d1";
import { parseListQuery } from "../../src/workspaces/workspaces.filters";
import { loadListPage } from "../../src/workspaces/workspaces.list.service";

const ACME = "org-AcmeAcmeAcme0001";
const OTHER = "org-OtherOtherOthr01";
const T = "2026-01-01T00:00:00.000Z";

/** A workspace record as the previous code stored it (in its Durable Object and as the index row's doc). */
function oldDoc(id: string, organization: string, organizationId: string, name: string, projectId: string): string {
  return JSON.stringify({ id, organization, organizationId, projectId, name, version: 3, tags: [], tagBindings: [] });
}

describe("D1 migration 0016 on a store written with organisation names", () => {
  it("converts every reference to the organisation's id, keeps the triggers working, and the readers find everything", async () => {
    const db = env.UPGRADE_DB;
    const migrations = env.TEST_MIGRATIONS;
    await applyD1Migrations(
      db,
      migrations.filter((m) => m.name < "0016"),
    );
    const orgTokenHash = await sha256Hex("org-token-secret");
    const teamTokenHash = await sha256Hex("team-token-secret");
    const rows: Array<[string, unknown[]]> = [
      ["INSERT INTO organizations (name, external_id, email, created_at, default_project_id) VALUES (?, ?, 'a@b.c', ?, 'prj-acme')", ["Acme", ACME, T]],
      ["INSERT INTO organizations (name, external_id, email, created_at, default_project_id) VALUES (?, ?, 'a@b.c', ?, 'prj-other')", ["Other", OTHER, T]],
      ["INSERT INTO users (id, username, created_at) VALUES ('user-1', 'alice', ?)", [T]],
      // Names as requests wrote them (case-insensitive columns): not always the stored case.
      ["INSERT INTO projects (id, organization_name, name, is_default, created_at) VALUES ('prj-acme', 'acme', 'Default Project', 1, ?)", [T]],
      ["INSERT INTO projects (id, organization_name, name, is_default, created_at) VALUES ('prj-other', 'Other', 'Default Project', 1, ?)", [T]],
      ["INSERT INTO teams (id, organization_name, name, is_owners, created_at) VALUES ('team-owners', 'Acme', 'owners', 1, ?)", [T]],
      ["INSERT INTO teams (id, organization_name, name, created_at) VALUES ('team-devs', 'Acme', 'devs', ?)", [T]],
      ["INSERT INTO team_members (team_id, user_id) VALUES ('team-owners', 'user-1')", []],
      ["INSERT INTO organization_memberships (id, organization_name, user_id, created_at) VALUES ('ou-1', 'Acme', 'user-1', ?)", [T]],
      ["INSERT INTO tokens (id, token_hash, kind, organization_name, created_at) VALUES ('at-org', ?, 'organization', 'Acme', ?)", [orgTokenHash, T]],
      [
        "INSERT INTO tokens (id, token_hash, kind, team_id, organization_name, created_at) VALUES ('at-team', ?, 'team', 'team-devs', 'Acme', ?)",
        [teamTokenHash, T],
      ],
      ["INSERT INTO agent_pools (id, organization_name, name, created_at) VALUES ('apool-1', 'Acme', 'pool', ?)", [T]],
      ["INSERT INTO oauth_clients (id, organization_name, created_at) VALUES ('oc-1', 'Acme', ?)", [T]],
      ["INSERT INTO oauth_tokens (id, oauth_client_id, organization_name, created_at) VALUES ('ot-1', 'oc-1', 'Acme', ?)", [T]],
      ["INSERT INTO ssh_keys (id, organization_name, name, created_at) VALUES ('sshkey-1', 'Acme', 'k', ?)", [T]],
      ["INSERT INTO tags (id, organization_name, name, created_at) VALUES ('tag-1', 'Acme', 'flat', ?)", [T]],
      ["INSERT INTO deleted_tags (id, organization_name, name, deleted_at) VALUES ('tag-0', 'Acme', 'gone', ?)", [T]],
      [
        "INSERT INTO organization_retention_policies (organization_name, id, type, created_at) VALUES ('Acme', 'drp-1', 'data-retention-policy-dont-deletes', ?)",
        [T],
      ],
      ["INSERT INTO varsets (id, organization_name, name, global, created_at, updated_at) VALUES ('varset-1', 'Acme', 'vs', 1, ?, ?)", [T, T]],
      // The same workspace name in both organisations (names are unique per organisation).
      [
        `INSERT INTO workspaces (id, organization_name, name, project_id, version, created_at, updated_at, latest_change_at, doc)
         VALUES ('ws-acme', 'Acme', 'one', 'prj-acme', 3, ?, ?, ?, ?)`,
        [T, T, T, oldDoc("ws-acme", "Acme", ACME, "one", "prj-acme")],
      ],
      [
        `INSERT INTO workspaces (id, organization_name, name, project_id, version, created_at, updated_at, latest_change_at, doc)
         VALUES ('ws-other', 'Other', 'one', 'prj-other', 3, ?, ?, ?, ?)`,
        [T, T, T, oldDoc("ws-other", "Other", OTHER, "one", "prj-other")],
      ],
      ["INSERT INTO workspace_tags (workspace_id, organization_name, kind, key, position, tag_id) VALUES ('ws-acme', 'Acme', 'flat', 'flat', 0, 'tag-1')", []],
      ["INSERT INTO workspace_names (organization_name, name, workspace_id, claimed_at, committed) VALUES ('Acme', 'one', 'ws-acme', 0, 1)", []],
      ["INSERT INTO workspace_names (organization_name, name, workspace_id, claimed_at, committed) VALUES ('Other', 'one', 'ws-other', 0, 1)", []],
    ];
    await db.batch(rows.map(([sql, binds]) => db.prepare(sql).bind(...binds)));

    await applyD1Migrations(db, migrations);

    const ids = async (sql: string) => (await db.prepare(sql).all<Record<string, unknown>>()).results;
    expect(await ids("SELECT id, organization_id FROM projects ORDER BY id")).toEqual([
      { id: "prj-acme", organization_id: ACME },
      { id: "prj-other", organization_id: OTHER },
    ]);
    for (const table of ["teams", "organization_memberships", "agent_pools", "oauth_clients", "oauth_tokens", "ssh_keys", "tags", "deleted_tags", "varsets"]) {
      const found = await ids(`SELECT DISTINCT organization_id FROM ${table}`);
      expect({ table, found }).toEqual({ table, found: [{ organization_id: ACME }] });
    }
    expect(await ids("SELECT id, organization_id FROM tokens ORDER BY id")).toEqual([
      { id: "at-org", organization_id: ACME },
      { id: "at-team", organization_id: ACME },
    ]);
    expect(await ids("SELECT organization_id, id FROM organization_retention_policies")).toEqual([{ organization_id: ACME, id: "drp-1" }]);
    // The documents lose the name and nothing else.
    const withoutName = (doc: string) => {
      const { organization: _name, ...rest } = JSON.parse(doc) as Record<string, unknown>;
      return rest;
    };
    const docs = await ids("SELECT id, organization_id, doc FROM workspaces ORDER BY id");
    expect(docs.map((r) => ({ ...r, doc: JSON.parse(r.doc as string) }))).toEqual([
      { id: "ws-acme", organization_id: ACME, doc: withoutName(oldDoc("ws-acme", "Acme", ACME, "one", "prj-acme")) },
      { id: "ws-other", organization_id: OTHER, doc: withoutName(oldDoc("ws-other", "Other", OTHER, "one", "prj-other")) },
    ]);
    expect(await ids("SELECT workspace_id, organization_id FROM workspace_tags")).toEqual([{ workspace_id: "ws-acme", organization_id: ACME }]);
    expect(await ids("SELECT organization_id, workspace_id FROM workspace_names ORDER BY workspace_id")).toEqual([
      { organization_id: ACME, workspace_id: "ws-acme" },
      { organization_id: OTHER, workspace_id: "ws-other" },
    ]);
    expect(await ids("SELECT organization_id, project_id, n FROM workspace_counts WHERE n > 0 ORDER BY project_id")).toEqual([
      { organization_id: ACME, project_id: "prj-acme", n: 1 },
      { organization_id: OTHER, project_id: "prj-other", n: 1 },
    ]);
    expect(await ids("SELECT workspace_id, organization_id FROM workspace_search ORDER BY workspace_id")).toEqual([
      { workspace_id: "ws-acme", organization_id: ACME },
      { workspace_id: "ws-other", organization_id: OTHER },
    ]);
    expect(await ids("SELECT name FROM sqlite_master WHERE sql LIKE '%organization_name%' ORDER BY name")).toEqual([]);

    // The readers of the index and of the tokens, on the migrated store.
    const owner: Principal = { kind: "user", userId: "user-1", username: "alice", isSiteAdmin: false, tokenId: null };
    const byName = await workspaceAccessRows(db, owner, { organization: "ACME", name: "One" });
    expect(byName.record?.id).toBe("ws-acme");
    expect(byName.org?.externalId).toBe(ACME);
    expect(byName.teams.map((t) => t.id)).toEqual(["team-owners"]);
    expect(byName.deadTagIds).toEqual(["tag-0"]);
    const page = await loadListPage(db.withSession("first-primary"), owner, "acme", parseListQuery({}).spec);
    expect(page?.total).toBe(1);
    expect(page?.workspaces.map((w) => w.record.id)).toEqual(["ws-acme"]);
    const searched = await loadListPage(db.withSession("first-primary"), owner, "Acme", parseListQuery({ "search[name]": "on" }).spec);
    expect(searched?.workspaces.map((w) => w.record.id)).toEqual(["ws-acme"]);
    expect(await tokenByHash(db, orgTokenHash)).toMatchObject({ kind: "organization", organizationId: ACME, organizationName: "Acme" });
    expect(await tokenByHash(db, teamTokenHash)).toMatchObject({ kind: "team", teamOrganizationId: ACME, organizationName: "Acme" });

    // The recreated triggers follow ids: counts and search on insert, rename and delete; the varsets' cascade.
    await db
      .prepare(
        `INSERT INTO workspaces (id, organization_id, name, project_id, version, created_at, updated_at, latest_change_at, doc)
         VALUES ('ws-two', ?, 'two', 'prj-acme', 1, ?, ?, ?, '{}')`,
      )
      .bind(ACME, T, T, T)
      .run();
    await db.prepare("UPDATE workspaces SET name = 'deux' WHERE id = 'ws-two'").run();
    expect(await ids("SELECT n FROM workspace_counts WHERE organization_id = 'org-AcmeAcmeAcme0001'")).toEqual([{ n: 2 }]);
    expect(
      await ids("SELECT s.workspace_id FROM workspace_search_fts f JOIN workspace_search s ON s.rid = f.rowid WHERE workspace_search_fts MATCH '\"eux\"'"),
    ).toEqual([{ workspace_id: "ws-two" }]);
    await expect(db.prepare("UPDATE projects SET default_agent_pool_id = 'apool-1' WHERE id = 'prj-acme'").run()).resolves.toBeDefined();
    await expect(db.prepare("UPDATE projects SET default_agent_pool_id = 'apool-1' WHERE id = 'prj-other'").run()).rejects.toThrow(
      /project_default_agent_pool_missing/,
    );

    // A rename on the upgraded store: one row, and the workspace answers to the new name only.
    const renamed = await updateOrganization(
      db,
      { id: ACME, name: "Acme" },
      { name: "Renamed", email: "a@b.c", attrs: {}, defaultExecutionMode: "remote", defaultAgentPoolId: null, allowForceDeleteWorkspaces: false },
    );
    expect(renamed.updated?.name).toBe("Renamed");
    expect((await workspaceAccessRows(db, owner, { organization: "renamed", name: "one" })).record).not.toBeNull();
    expect((await workspaceAccessRows(db, owner, { organization: "Acme", name: "one" })).record).toBeNull();

    await db.prepare("DELETE FROM organizations WHERE external_id = ?").bind(ACME).run();
    expect(await ids("SELECT id FROM varsets")).toEqual([]);
  });
});
