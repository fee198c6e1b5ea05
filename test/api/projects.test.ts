// Projects (HCP Terraform API docs: Projects) — shapes, name rules, list filters, execution defaults, permissions, delete rules.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { insertProjectStatement } from "../../src/projects/projects.d1";
import { createOrg, createWorkspace, grantProject, grantWorkspace, makeOrgToken, makeTeam, makeUser, organizationId, makeTeams } from "../fixtures";
import { api, uniqueName, createdResource } from "../helpers";

type Attrs = Record<string, unknown>;
const create = (org: string, attributes: Attrs, relationships?: unknown, token?: string) =>
  api("POST", `/organizations/${org}/projects`, { token, body: { data: { type: "projects", attributes, ...(relationships ? { relationships } : {}) } } });
const update = (id: string, attributes: Attrs, relationships?: unknown, token?: string) =>
  api("PATCH", `/projects/${id}`, { token, body: { data: { type: "projects", attributes, ...(relationships ? { relationships } : {}) } } });
async function made(
  org: string,
  attributes: Attrs,
  relationships?: unknown,
): Promise<{ id: string; attributes: Record<string, any>; relationships: Record<string, any> }> {
  const res = await create(org, attributes, relationships);
  if (res.status !== 201) throw new Error(`project: ${res.status} ${res.text}`);
  return res.body.data;
}
const pool = async (org: string, name = uniqueName("pool")) => {
  const res = await api("POST", `/organizations/${org}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name } } } });
  if (res.status !== 201) throw new Error(`pool: ${res.status} ${res.text}`);
  return res.body.data.id as string;
};
const defaultProjectOf = async (org: string) => (await api("GET", `/organizations/${org}`)).body.data.relationships["default-project"].data.id as string;
const names = (res: { body: { data: { attributes: { name: string } }[] } }) => res.body.data.map((p) => p.attributes.name);
const expect422 = (res: { status: number; body: any }, pointer: string, detail?: string | RegExp) => {
  expect(res.status).toBe(422);
  expect(res.body.errors[0].title).toBe("invalid attribute");
  expect(res.body.errors[0].source?.pointer).toBe(pointer);
  if (typeof detail === "string") expect(res.body.errors[0].detail).toBe(detail);
  else if (detail) expect(res.body.errors[0].detail).toMatch(detail);
};

describe("project create / show / update", () => {
  it("creates a project with the real service's shape; show returns the same document", async () => {
    const org = await createOrg();
    const res = await create(org, { name: "Platform Team", description: "infra" });
    const p = createdResource(res, "projects", "prj");
    expect(p.attributes).toMatchObject({
      name: "Platform Team",
      description: "infra",
      "workspace-count": 0,
      "team-count": 0,
      "default-execution-mode": "remote",
      "auto-destroy-activity-duration": null,
      "setting-overwrites": { "execution-mode": false, "agent-pool": false },
      permissions: { "can-read": true, "can-update": true, "can-destroy": true, "can-create-workspace": true },
    });
    expect(p.attributes["created-at"]).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(p.relationships.organization).toEqual({ data: { id: org, type: "organizations" }, links: { related: `/api/v2/organizations/${org}` } });
    expect(p.relationships["default-agent-pool"]).toEqual({ data: null });
    expect(p.relationships["tag-bindings"].links.related).toBe(`/api/v2/projects/${p.id}/tag-bindings`);
    expect(p.relationships["effective-tag-bindings"].links.related).toBe(`/api/v2/projects/${p.id}/effective-tag-bindings`);
    expect(p.links.self).toBe(`/api/v2/projects/${p.id}`);
    const show = await api("GET", `/projects/${p.id}`);
    expect(show.status).toBe(200);
    expect(show.body.data).toEqual(p);
  });

  it("updates name and description; omitted attributes keep their values", async () => {
    const org = await createOrg();
    const p = await made(org, { name: "Before", description: "keep me", "auto-destroy-activity-duration": "14d" });
    const res = await update(p.id, { name: "After" });
    expect(res.status).toBe(200);
    expect(res.body.data.attributes).toMatchObject({ name: "After", description: "keep me", "auto-destroy-activity-duration": "14d" });
    const res2 = await update(p.id, { description: null });
    expect(res2.body.data.attributes).toMatchObject({ name: "After", description: null });
    expect((await api("GET", `/projects/${p.id}`)).body.data.attributes.name).toBe("After");
  });

  it("requires a name on create (422 pointing at it)", async () => {
    const org = await createOrg();
    const res = await create(org, { description: "no name" });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].source.pointer).toBe("/data/attributes/name");
  });

  it("enforces 3-40 characters of letters, numbers, spaces, - and _ with no edge spaces", async () => {
    const org = await createOrg();
    for (const bad of ["ab", "x".repeat(41)]) expect422(await create(org, { name: bad }), "/data/attributes/name");
    for (const bad of [" lead", "trail ", "dot.name", "slash/name", "tab\tname", "émoji"]) {
      expect422(await create(org, { name: bad }), "/data/attributes/name", /^Name may only contain/);
    }
    for (const good of ["abc", "x".repeat(40), "Team A_b-c 9"]) expect((await create(org, { name: good })).status).toBe(201);
    const p = await made(org, { name: "Renamable" });
    expect422(await update(p.id, { name: "bad!name" }), "/data/attributes/name", /^Name may only contain/);
    expect((await api("GET", `/projects/${p.id}`)).body.data.attributes.name).toBe("Renamable");
  });

  it("keeps names unique per organisation, case-insensitively, on create and rename", async () => {
    const org = await createOrg();
    const other = await createOrg();
    await made(org, { name: "Alpha" });
    expect422(await create(org, { name: "ALPHA" }), "/data/attributes/name", "Name has already been taken");
    expect422(await create(org, { name: "Default Project" }), "/data/attributes/name", "Name has already been taken");
    expect((await create(other, { name: "Alpha" })).status).toBe(201);
    const b = await made(org, { name: "Beta" });
    expect422(await update(b.id, { name: "alpha" }), "/data/attributes/name", "Name has already been taken");
    // Changing only the case of its own name is not a clash.
    expect((await update(b.id, { name: "BETA" })).body.data.attributes.name).toBe("BETA");
  });

  it("gives exactly one 201 for concurrent creates of one name", async () => {
    const org = await createOrg();
    const results = await Promise.all(Array.from({ length: 10 }, () => create(org, { name: "Raced" })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422)).toHaveLength(9);
  });

  it("limits descriptions to 256 characters", async () => {
    const org = await createOrg();
    expect((await create(org, { name: "Long desc", description: "d".repeat(256) })).status).toBe(201);
    expect422(await create(org, { name: "Too long", description: "d".repeat(257) }), "/data/attributes/description");
  });

  it("validates auto-destroy-activity-duration like workspaces and clears it with null", async () => {
    const org = await createOrg();
    for (const bad of ["1y", "14", "d", "12345d", "0d"]) {
      expect422(
        await create(org, { name: uniqueName("p").slice(0, 30), "auto-destroy-activity-duration": bad }),
        "/data/attributes/auto-destroy-activity-duration",
        "Auto destroy activity duration has an incorrect format, we expect up to 4 numeric digits and 1 unit ('d' or 'h')",
      );
    }
    const p = await made(org, { name: "Ephemeral", "auto-destroy-activity-duration": "24h" });
    expect(p.attributes["auto-destroy-activity-duration"]).toBe("24h");
    expect((await update(p.id, { "auto-destroy-activity-duration": null })).body.data.attributes["auto-destroy-activity-duration"]).toBeNull();
  });

  it("gives a new workspace its project's auto-destroy-activity-duration unless it sets its own", async () => {
    const org = await createOrg();
    const p = await made(org, { name: "Short lived", "auto-destroy-activity-duration": "3d" });
    const rel = { project: { data: { type: "projects", id: p.id } } };
    const inheriting = await createWorkspace(org, { name: uniqueName("ws") }, undefined, rel);
    expect(inheriting.attributes).toMatchObject({ "auto-destroy-activity-duration": "3d", "inherits-project-auto-destroy": true });
    const own = await createWorkspace(org, { name: uniqueName("ws"), "auto-destroy-activity-duration": "14d" }, undefined, rel);
    expect(own.attributes["auto-destroy-activity-duration"]).toBe("14d");
    const optedOut = await createWorkspace(org, { name: uniqueName("ws"), "inherits-project-auto-destroy": false }, undefined, rel);
    expect(optedOut.attributes["auto-destroy-activity-duration"]).toBeNull();
    // The state afterwards: a read shows the inherited value; the default project sets none.
    expect((await api("GET", `/workspaces/${inheriting.id}`)).body.data.attributes["auto-destroy-activity-duration"]).toBe("3d");
    expect((await createWorkspace(org, { name: uniqueName("ws") })).attributes["auto-destroy-activity-duration"]).toBeNull();
  });

  it("stores tag bindings given on create and replaces them on update", async () => {
    const org = await createOrg();
    const tb = (pairs: [string, string][]) => ({
      "tag-bindings": { data: pairs.map(([key, value]) => ({ type: "tag-bindings", attributes: { key, value } })) },
    });
    const p = await made(
      org,
      { name: "Tagged" },
      tb([
        ["env", "prod"],
        ["team", "core"],
      ]),
    );
    const list = async () => (await api("GET", `/projects/${p.id}/tag-bindings`)).body.data.map((b: any) => [b.attributes.key, b.attributes.value]);
    expect(await list()).toEqual([
      ["env", "prod"],
      ["team", "core"],
    ]);
    expect((await update(p.id, {}, tb([["env", "dev"]]))).status).toBe(200);
    expect(await list()).toEqual([["env", "dev"]]);
    const bad = await create(org, { name: "Bad tags" }, tb([["", "x"]]));
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].source.pointer).toMatch(/^\/data\/relationships\/tag-bindings\/data\/0/);
    expect((await api("GET", `/organizations/${org}/projects?filter%5Bnames%5D=Bad%20tags`)).body.data).toEqual([]);
  });

  it("404s for an unknown or malformed id", async () => {
    expect((await api("GET", "/projects/prj-doesnotexist0000")).status).toBe(404);
    expect((await api("GET", "/projects/not-a-project")).status).toBe(404);
    expect((await update("prj-doesnotexist0000", { name: "xyz" })).status).toBe(404);
  });
});

describe("project execution defaults", () => {
  it("inherits the organisation's mode (overwrites false) and reports its own mode (overwrites true)", async () => {
    const org = await createOrg();
    const inheriting = await made(org, { name: "Inheriting" });
    const local = await made(org, { name: "Local", "default-execution-mode": "local" });
    expect(local.attributes["default-execution-mode"]).toBe("local");
    expect(local.attributes["setting-overwrites"]).toMatchObject({ "execution-mode": true, "agent-pool": true });
    expect(
      (await api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes: { "default-execution-mode": "local" } } } })).status,
    ).toBe(200);
    const shown = (await api("GET", `/projects/${inheriting.id}`)).body.data.attributes;
    expect(shown["default-execution-mode"]).toBe("local");
    expect(shown["setting-overwrites"]["execution-mode"]).toBe(false);
    // null (or an execution-mode overwrite of false) goes back to inheriting.
    expect((await update(local.id, { "default-execution-mode": "remote" })).body.data.attributes["default-execution-mode"]).toBe("remote");
    const back = await update(local.id, { "setting-overwrites": { "execution-mode": false } });
    expect(back.body.data.attributes["default-execution-mode"]).toBe("local");
    expect(back.body.data.attributes["setting-overwrites"]["execution-mode"]).toBe(false);
    const explicit = await made(org, { name: "Explicit", "default-execution-mode": "remote" });
    expect((await update(explicit.id, { "default-execution-mode": null })).body.data.attributes["setting-overwrites"]["execution-mode"]).toBe(false);
  });

  it("requires a pool for agent mode and refuses one otherwise, with the real texts", async () => {
    const org = await createOrg();
    const apool = await pool(org);
    expect422(
      await create(org, { name: "Agentless", "default-execution-mode": "agent" }),
      "/data/attributes/default-agent-pool-id",
      "Agent pool must be specified when using 'agent' execution mode",
    );
    expect422(
      await create(org, { name: "Remote pool", "default-execution-mode": "remote", "default-agent-pool-id": apool }),
      "/data/attributes/default-agent-pool-id",
      "Agent pool must not be specified unless using 'agent' execution mode",
    );
    expect422(
      await create(org, {
        name: "Mismatch",
        "default-execution-mode": "agent",
        "default-agent-pool-id": apool,
        "setting-overwrites": { "execution-mode": true, "agent-pool": false },
      }),
      "/data/attributes/setting-overwrites",
      "If agent-pool and execution-mode are both included in setting-overwrites, their values must be the same.",
    );
    const byAttr = await made(org, { name: "Agent attr", "default-execution-mode": "agent", "default-agent-pool-id": apool });
    expect(byAttr.attributes["default-execution-mode"]).toBe("agent");
    expect(byAttr.relationships["default-agent-pool"].data).toEqual({ id: apool, type: "agent-pools" });
    const byRel = await made(
      org,
      { name: "Agent rel", "default-execution-mode": "agent" },
      { "default-agent-pool": { data: { type: "agent-pools", id: apool } } },
    );
    expect(byRel.relationships["default-agent-pool"].data).toEqual({ id: apool, type: "agent-pools" });
    // Switching away from agent mode drops the pool; a description-only update keeps both.
    expect((await update(byAttr.id, { description: "x" })).body.data.relationships["default-agent-pool"].data.id).toBe(apool);
    const remote = await update(byAttr.id, { "default-execution-mode": "remote" });
    expect(remote.body.data.relationships["default-agent-pool"].data).toBeNull();
  });

  it("refuses a pool of another organisation or an unknown pool", async () => {
    const org = await createOrg();
    const foreign = await pool(await createOrg());
    expect422(
      await create(org, { name: "Foreign", "default-execution-mode": "agent", "default-agent-pool-id": foreign }),
      "/data/attributes/default-agent-pool-id",
    );
    expect422(
      await create(
        org,
        { name: "Unknown", "default-execution-mode": "agent" },
        { "default-agent-pool": { data: { type: "agent-pools", id: "apool-nope00000000000" } } },
      ),
      "/data/relationships/default-agent-pool",
    );
  });

  it("gives workspaces created in it its default execution mode while they inherit", async () => {
    const org = await createOrg();
    const p = await made(org, { name: "Local Things", "default-execution-mode": "local" });
    const ws = await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: p.id } } });
    expect(ws.attributes["execution-mode"]).toBe("local");
    expect(ws.attributes["setting-overwrites"]["execution-mode"]).toBe(false);
    expect((await api("GET", `/workspaces/${ws.id}`)).body.data.attributes["execution-mode"]).toBe("local");
    expect((await api("GET", `/projects/${p.id}`)).body.data.attributes["workspace-count"]).toBe(1);

    const apool = await pool(org);
    const agents = await made(org, { name: "Agents", "default-execution-mode": "agent", "default-agent-pool-id": apool });
    const ws2 = await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: agents.id } } });
    expect(ws2.attributes["execution-mode"]).toBe("agent");
    expect(ws2.relationships["agent-pool"].data).toEqual({ id: apool, type: "agent-pools" });
  });
});

describe("project list", () => {
  it("lists with the Default Project, q (case-insensitive substring), filter[names] (exact, OR) and sort", async () => {
    const org = await createOrg();
    for (const name of ["Banana split", "apple pie", "Elm", "Cherry", "Apple"]) await made(org, { name });
    const all = await api("GET", `/organizations/${org}/projects`);
    expect(all.status).toBe(200);
    // Without sort: by name, the Default Project last (go-tfe's project tests read a new project as item 0).
    expect(names(all)).toEqual(["Apple", "apple pie", "Banana split", "Cherry", "Elm", "Default Project"]);
    expect(all.body.meta["status-counts"]).toEqual({ total: 6, matching: 6 });
    expect(all.body.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 6 });
    expect(names(await api("GET", `/organizations/${org}/projects?sort=name`))).toEqual([
      "Apple",
      "apple pie",
      "Banana split",
      "Cherry",
      "Default Project",
      "Elm",
    ]);
    expect(names(await api("GET", `/organizations/${org}/projects?sort=-name`))).toEqual([
      "Elm",
      "Default Project",
      "Cherry",
      "Banana split",
      "apple pie",
      "Apple",
    ]);
    const q = await api("GET", `/organizations/${org}/projects?q=APPLE`);
    expect(names(q)).toEqual(["Apple", "apple pie"]);
    expect(q.body.meta["status-counts"]).toEqual({ total: 6, matching: 2 });
    expect(names(await api("GET", `/organizations/${org}/projects?q=%25`))).toEqual([]);
    expect(names(await api("GET", `/organizations/${org}/projects?filter%5Bnames%5D=Apple`))).toEqual(["Apple"]);
    expect(names(await api("GET", `/organizations/${org}/projects?filter%5Bnames%5D=Apple,Cherry,Nope`))).toEqual(["Apple", "Cherry"]);
    expect(names(await api("GET", `/organizations/${org}/projects?filter%5Bnames%5D=Appl`))).toEqual([]);
    // go-tfe sends parameters the service does not know: ignored.
    expect((await api("GET", `/organizations/${org}/projects?junk=1&filter%5Bnames%5D=Cherry`)).status).toBe(200);
    expect((await api("GET", `/organizations/${org}/projects?sort=created-at`)).status).toBe(400);
  });

  it("paginates", async () => {
    const org = await createOrg();
    for (const name of ["P one", "P two", "P three"]) await made(org, { name });
    const page2 = await api("GET", `/organizations/${org}/projects?page%5Bsize%5D=2&page%5Bnumber%5D=2`);
    expect(names(page2)).toEqual(["P two", "Default Project"]);
    expect(page2.body.meta.pagination).toMatchObject({
      "current-page": 2,
      "page-size": 2,
      "total-pages": 2,
      "total-count": 4,
      "prev-page": 1,
      "next-page": null,
    });
    const page1 = await api("GET", `/organizations/${org}/projects?page%5Bsize%5D=2`);
    expect([...names(page1), ...names(page2)]).toEqual(["P one", "P three", "P two", "Default Project"]);
    const beyond = await api("GET", `/organizations/${org}/projects?page%5Bnumber%5D=99`);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.pagination["total-count"]).toBe(4);
  });
});

describe("project permissions", () => {
  it("create, update and delete need owners, the org token or manage-projects; others get 404", async () => {
    const org = await createOrg();
    const [plain, reader, manager] = await makeTeams(org, {}, { "read-projects": true }, { "manage-projects": true });
    const orgToken = await makeOrgToken(org);
    const owner = await makeUser({ ownerOf: org });
    for (const t of [plain, reader]) expect((await create(org, { name: "Nope" }, undefined, t.token)).status).toBe(404);
    expect((await create(org, { name: "By manager" }, undefined, manager.token)).status).toBe(201);
    expect((await create(org, { name: "By org token" }, undefined, orgToken.token)).status).toBe(201);
    expect((await create(org, { name: "By owner" }, undefined, owner.token)).status).toBe(201);
    const p = await made(org, { name: "Target" });
    for (const t of [plain, reader]) {
      expect((await update(p.id, { description: "x" }, undefined, t.token)).status).toBe(404);
      expect((await api("DELETE", `/projects/${p.id}`, { token: t.token })).status).toBe(404);
    }
    const shown = await api("GET", `/projects/${p.id}`, { token: reader.token });
    expect(shown.status).toBe(200);
    expect(shown.body.data.attributes.permissions).toMatchObject({ "can-update": false, "can-destroy": false });
    expect((await update(p.id, { description: "ok" }, undefined, manager.token)).status).toBe(200);
    expect((await api("DELETE", `/projects/${p.id}`, { token: manager.token })).status).toBe(204);
  });

  it("reads: org-wide readers see every project; other teams only projects they have access to", async () => {
    const org = await createOrg();
    const a = await made(org, { name: "Granted" });
    const b = await made(org, { name: "Hidden" });
    const plain = await makeTeam(org);
    expect((await api("GET", `/projects/${a.id}`, { token: plain.token })).status).toBe(404);
    expect(names(await api("GET", `/organizations/${org}/projects`, { token: plain.token }))).toEqual([]);
    await grantProject(plain.id, a.id, "read");
    expect((await api("GET", `/projects/${a.id}`, { token: plain.token })).status).toBe(200);
    expect((await api("GET", `/projects/${b.id}`, { token: plain.token })).status).toBe(404);
    const listed = await api("GET", `/organizations/${org}/projects`, { token: plain.token });
    expect(names(listed)).toEqual(["Granted"]);
    expect(listed.body.meta["status-counts"]).toEqual({ total: 1, matching: 1 });
    for (const perm of ["read-projects", "read-workspaces", "manage-workspaces"]) {
      const t = await makeTeam(org, { [perm]: true });
      expect(names(await api("GET", `/organizations/${org}/projects`, { token: t.token }))).toEqual(["Granted", "Hidden", "Default Project"]);
      expect((await api("GET", `/projects/${b.id}`, { token: t.token })).status).toBe(200);
    }
  });

  it("never shows another organisation's project: 404 for show, update, delete and list", async () => {
    const orgA = await createOrg();
    const orgB = await createOrg();
    const p = await made(orgA, { name: "Secret" });
    const ownerB = await makeUser({ ownerOf: orgB });
    expect((await api("GET", `/projects/${p.id}`, { token: ownerB.token })).status).toBe(404);
    expect((await update(p.id, { name: "Stolen" }, undefined, ownerB.token)).status).toBe(404);
    expect((await api("DELETE", `/projects/${p.id}`, { token: ownerB.token })).status).toBe(404);
    expect((await api("GET", `/organizations/${orgA}/projects`, { token: ownerB.token })).status).toBe(404);
    expect((await create(orgA, { name: "Intruder" }, undefined, ownerB.token)).status).toBe(404);
    expect((await api("GET", `/projects/${p.id}`)).body.data.attributes.name).toBe("Secret");
  });
});

describe("project delete", () => {
  it("refuses the Default Project with 422", async () => {
    const org = await createOrg();
    const def = await defaultProjectOf(org);
    const res = await api("DELETE", `/projects/${def}`);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].title).toBe("invalid attribute");
    expect(res.body.errors[0].detail).toBe("The Default Project cannot be deleted");
    expect((await api("GET", `/projects/${def}`)).status).toBe(200);
    expect((await api("GET", `/projects/${def}`)).body.data.attributes.permissions["can-destroy"]).toBe(false);
  });

  it("refuses a project with workspaces with 409 until they are gone", async () => {
    const org = await createOrg();
    const p = await made(org, { name: "Busy" });
    const ws = await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: p.id } } });
    const res = await api("DELETE", `/projects/${p.id}`);
    expect(res.status).toBe(409);
    expect(res.body.errors[0]).toMatchObject({ status: "409", title: "conflict", detail: "Project still contains workspaces; move or delete them first" });
    expect((await api("GET", `/projects/${p.id}`)).status).toBe(200);
    expect((await api("DELETE", `/workspaces/${ws.id}`)).status).toBe(204);
    expect((await api("DELETE", `/projects/${p.id}`)).status).toBe(204);
    expect((await api("GET", `/projects/${p.id}`)).status).toBe(404);
    expect((await api("DELETE", `/projects/${p.id}`)).status).toBe(404);
  });

  it("deletes the project's team access and tag bindings with it", async () => {
    const org = await createOrg();
    const p = await made(org, { name: "Doomed" }, { "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "k", value: "v" } }] } });
    const team = await makeTeam(org);
    await grantProject(team.id, p.id, "read");
    expect((await api("GET", `/projects/${p.id}`)).body.data.attributes["team-count"]).toBe(1);
    expect((await api("DELETE", `/projects/${p.id}`)).status).toBe(204);
    const left = await env.DB.batch([
      env.DB.prepare("SELECT count(*) AS n FROM team_projects WHERE project_id = ?").bind(p.id),
      env.DB.prepare("SELECT count(*) AS n FROM project_tag_bindings WHERE project_id = ?").bind(p.id),
    ]);
    expect(left.map((r) => (r.results[0] as { n: number }).n)).toEqual([0, 0]);
    // The name is free again.
    expect((await create(org, { name: "Doomed" })).status).toBe(201);
  });
});

describe("project writes: limits, both pool forms, concurrency", () => {
  const tb = (n: number) => ({
    "tag-bindings": { data: Array.from({ length: n }, (_, i) => ({ type: "tag-bindings", attributes: { key: `k${i}`, value: `v${i}` } })) },
  });

  it("accepts at most 10 tag bindings on create and update; [] clears them", async () => {
    const org = await createOrg();
    const tooMany = await create(org, { name: "Eleven" }, tb(11));
    expect422(tooMany, "/data/relationships/tag-bindings/data", "Tag bindings cannot exceed 10 per resource");
    expect((await api("GET", `/organizations/${org}/projects?filter%5Bnames%5D=Eleven`)).body.data).toEqual([]);
    const p = await made(org, { name: "Ten" }, tb(10));
    const bindings = async () => (await api("GET", `/projects/${p.id}/tag-bindings`)).body.data as unknown[];
    expect(await bindings()).toHaveLength(10);
    expect422(await update(p.id, {}, tb(11)), "/data/relationships/tag-bindings/data");
    expect(await bindings()).toHaveLength(10);
    expect((await update(p.id, {}, { "tag-bindings": { data: [] } })).status).toBe(200);
    expect(await bindings()).toEqual([]);
  });

  it("takes the pool as attribute or relationship; both naming different pools is a 422", async () => {
    const org = await createOrg();
    const [p1, p2] = [await pool(org), await pool(org)];
    const rel = (id: string | null) => ({ "default-agent-pool": { data: id ? { type: "agent-pools", id } : null } });
    expect422(
      await create(org, { name: "Two pools", "default-execution-mode": "agent", "default-agent-pool-id": p1 }, rel(p2)),
      "/data/relationships/default-agent-pool",
    );
    const same = await made(org, { name: "Same pool", "default-execution-mode": "agent", "default-agent-pool-id": p1 }, rel(p1));
    expect(same.relationships["default-agent-pool"].data.id).toBe(p1);
    // The relationship alone switches the pool, keeping agent mode.
    expect((await update(same.id, {}, rel(p2))).body.data.relationships["default-agent-pool"].data.id).toBe(p2);
    // go-tfe's overwrite keys (default-execution-mode / default-agent-pool) are understood too.
    const back = await update(same.id, { "setting-overwrites": { "default-execution-mode": false, "default-agent-pool": false } });
    expect(back.status).toBe(200);
    expect(back.body.data.attributes["setting-overwrites"]["execution-mode"]).toBe(false);
    expect(back.body.data.attributes["default-execution-mode"]).toBe("remote");
    expect(back.body.data.relationships["default-agent-pool"].data).toBeNull();
  });

  it("concurrent PATCHes of different attributes all land", async () => {
    const org = await createOrg();
    const p = await made(org, { name: "Concurrent", description: "old" });
    const apool = await pool(org);
    const results = await Promise.all([
      update(p.id, { name: "Renamed concurrently" }),
      update(p.id, { description: "new" }),
      update(p.id, { "auto-destroy-activity-duration": "3d" }),
      update(p.id, { "default-execution-mode": "agent", "default-agent-pool-id": apool }),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const shown = (await api("GET", `/projects/${p.id}`)).body.data;
    expect(shown.attributes).toMatchObject({
      name: "Renamed concurrently",
      description: "new",
      "auto-destroy-activity-duration": "3d",
      "default-execution-mode": "agent",
    });
    expect(shown.relationships["default-agent-pool"].data).toEqual({ id: apool, type: "agent-pools" });
  });

  it("a project naming a pool and the pool's delete never both succeed", async () => {
    const org = await createOrg();
    for (let i = 0; i < 6; i++) {
      const apool = await pool(org);
      const [made_, deleted] = await Promise.all([
        create(org, { name: `Racer ${i}`, "default-execution-mode": "agent", "default-agent-pool-id": apool }),
        api("DELETE", `/agent-pools/${apool}`),
      ]);
      expect([made_.status, deleted.status].sort()).toSatisfy((s: number[]) => (s[0] === 201 && s[1] === 422) || (s[0] === 204 && s[1] === 422));
      const poolLeft = (await api("GET", `/agent-pools/${apool}`)).status;
      expect(poolLeft).toBe(made_.status === 201 ? 200 : 404);
    }
    // The database itself refuses a project row naming a missing pool (migration 0002), whatever the writer.
    const direct = insertProjectStatement(env.DB, {
      id: "prj-direct0000000000",
      organizationId: await organizationId(org),
      name: "Direct",
      description: null,
      attrs: {},
      mode: "agent",
      pool: "apool-missing000000000",
      createdAt: new Date().toISOString(),
    });
    await expect(direct.run()).rejects.toThrow(/project_default_agent_pool_missing/);
  });

  it("teams with access to a workspace in a project can read that project", async () => {
    const org = await createOrg();
    const p = await made(org, { name: "Via workspace" });
    const ws = await createWorkspace(org, {}, undefined, { project: { data: { type: "projects", id: p.id } } });
    const team = await makeTeam(org);
    expect((await api("GET", `/projects/${p.id}`, { token: team.token })).status).toBe(404);
    await grantWorkspace(team.id, ws.id, "read");
    const shown = await api("GET", `/projects/${p.id}`, { token: team.token });
    expect(shown.status).toBe(200);
    expect(shown.body.data.attributes.permissions).toMatchObject({ "can-update": false, "can-destroy": false });
    expect(names(await api("GET", `/organizations/${org}/projects`, { token: team.token }))).toEqual(["Via workspace"]);
  });
});
