// State access through includes and
// signed URLs, projects deleted under a workspace, and stale name leases (item 9, the outbox alarm: test/do/workspace.outbox.test.ts).
import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import SparkMD5 from "spark-md5";
import { describe, expect, it } from "vitest";
import { claimWorkspaceName, createOrg, createWorkspace, grantWorkspace, makeTeam } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { stateDoc, urlAndSecret } from "../state-docs";

const STATE = stateDoc({ outputs: urlAndSecret("https://x", "hunter2") });
const md5 = (s: string) => SparkMD5.hash(s);
const svBody = (attrs: Record<string, unknown>) => ({ data: { type: "state-versions", attributes: { serial: 1, lineage: "abc", ...attrs } } });
const raw = (url: string, init: RequestInit = {}) => exports.default.fetch(new Request(url, init));
const urlsIn = (doc: unknown) => JSON.stringify(doc).match(/_blobs\/[^"]*/g) ?? [];

async function workspaceWithState(org?: string) {
  org ??= await createOrg();
  const ws = await createWorkspace(org);
  await api("POST", `/workspaces/${ws.id}/actions/lock`);
  const sv = await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE), state: btoa(STATE) }) });
  expect(sv.status).toBe(201);
  return { org, ws, sv: sv.body.data };
}

describe("read-outputs access through includes", () => {
  it("include=current_state_version on show and list gives a read-outputs team no state version and no URL", async () => {
    const { org, ws } = await workspaceWithState();
    const team = await makeTeam(org);
    await grantWorkspace(team.id, ws.id, "custom", { runs: "read", "state-versions": "read-outputs" });
    expect((await api("GET", `/workspaces/${ws.id}/current-state-version`, { token: team.token })).status).toBe(404);
    const shown = await api("GET", `/workspaces/${ws.id}?include=current_state_version,outputs`, { token: team.token });
    expect(shown.status).toBe(200);
    const included = (shown.body.included ?? []) as Array<{ type: string; attributes: Record<string, unknown> }>;
    expect(included.filter((r) => r.type === "state-versions")).toEqual([]);
    expect(urlsIn(shown.body)).toEqual([]);
    // Outputs stay readable, their sensitive values hidden.
    const secret = included.find((r) => r.type === "workspace-outputs" && r.attributes.name === "secret");
    expect(secret?.attributes.value).toBeNull();
    const listed = await api("GET", `/organizations/${org}/workspaces?include=current_state_version`, { token: team.token });
    expect(listed.status).toBe(200);
    expect((listed.body.included ?? []).filter((r: { type: string }) => r.type === "state-versions")).toEqual([]);
    expect(urlsIn(listed.body)).toEqual([]);
    // A state reader still gets it.
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "read");
    const ok = await api("GET", `/workspaces/${ws.id}?include=current_state_version`, { token: reader.token });
    expect(ok.body.included.map((r: { type: string }) => r.type)).toEqual(["state-versions"]);
  });
});

describe("upload URLs", () => {
  it("read and plan callers get no upload URL; a finalized version has none at all", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const pending = (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE) }) })).body.data;
    expect(pending.attributes["hosted-state-upload-url"]).toMatch(/_blobs/);
    for (const access of ["read", "plan"]) {
      const team = await makeTeam(org);
      await grantWorkspace(team.id, ws.id, access);
      const seen = await api("GET", `/state-versions/${pending.id}`, { token: team.token });
      expect(seen.status).toBe(200);
      expect(seen.body.data.attributes["hosted-state-upload-url"]).toBeNull();
      expect(seen.body.data.attributes["hosted-json-state-upload-url"]).toBeNull();
    }
    const finalized = (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ serial: 2, md5: md5(STATE), state: btoa(STATE) }) })).body
      .data;
    expect(finalized.attributes["hosted-json-state-upload-url"]).toBeNull();
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "read");
    const again = await api("GET", `/state-versions/${finalized.id}`, { token: reader.token });
    expect(urlsIn(again.body).filter((u) => u.includes("method=PUT"))).toEqual([]);
  });

  it("each upload URL works once, the JSON one also after the state finalized the version", async () => {
    const ws = await createWorkspace(await createOrg());
    await api("POST", `/workspaces/${ws.id}/actions/lock`);
    const sv = (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ md5: md5(STATE) }) })).body.data;
    const stateUrl = sv.attributes["hosted-state-upload-url"];
    const jsonUrl = sv.attributes["hosted-json-state-upload-url"];
    expect((await raw(stateUrl, { method: "PUT", body: STATE })).status).toBe(200);
    expect((await raw(stateUrl, { method: "PUT", body: STATE })).status).toBe(409);
    expect((await raw(jsonUrl, { method: "PUT", body: '{"a":1}' })).status).toBe(200);
    const second = await raw(jsonUrl, { method: "PUT", body: '{"a":2}' });
    expect(second.status).toBe(409);
    const shown = await api("GET", `/state-versions/${sv.id}`);
    expect(await (await raw(shown.body.data.attributes["hosted-json-state-download-url"])).text()).toBe('{"a":1}');
  });
});

describe("signed URLs of a deleted organisation", () => {
  it("download and upload URLs answer 404 once the organisation is gone", async () => {
    const { org, ws, sv } = await workspaceWithState();
    const pending = (await api("POST", `/workspaces/${ws.id}/state-versions`, { body: svBody({ serial: 2, md5: md5(STATE) }) })).body.data;
    const download = sv.attributes["hosted-state-download-url"];
    const upload = pending.attributes["hosted-state-upload-url"];
    expect((await raw(download)).status).toBe(200);
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
    const got = await raw(download);
    expect(got.status).toBe(404);
    expect(await got.text()).not.toContain("hunter2");
    expect((await raw(upload, { method: "PUT", body: STATE })).status).toBe(404);
  });

  it("a re-created organisation of the same name does not revive the URLs", async () => {
    const { org, sv } = await workspaceWithState();
    expect((await api("DELETE", `/organizations/${org}`)).status).toBe(204);
    await createOrg(undefined, org);
    expect((await raw(sv.attributes["hosted-state-download-url"])).status).toBe(404);
  });
});

describe("a project deleted under a workspace", () => {
  const project = async (org: string) => {
    const res = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("p") } } } });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const intoProject = (id: string) => ({ project: { data: { type: "projects", id } } });

  it("a create whose index write is still pending blocks the project delete", async () => {
    const org = await createOrg();
    const p = await project(org);
    const created = await api("POST", `/organizations/${org}/workspaces`, {
      headers: { "X-Fault-Fail-Index-Writes": "1" },
      body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") }, relationships: intoProject(p) } },
    });
    expect(created.status).toBe(201);
    const del = await api("DELETE", `/projects/${p}`);
    expect(del.status).toBe(409);
    expect(del.body.errors[0]).toMatchObject({ status: "409", detail: "Project still contains workspaces; move or delete them first" });
    await runDurableObjectAlarm(env.WORKSPACES.getByName(created.body.data.id));
    expect((await api("GET", `/projects/${p}`)).status).toBe(200);
  });

  it("a move whose index write is still pending blocks the project delete", async () => {
    const org = await createOrg();
    const p = await project(org);
    const ws = await createWorkspace(org);
    const moved = await api("PATCH", `/workspaces/${ws.id}`, {
      headers: { "X-Fault-Fail-Index-Writes": "1" },
      body: { data: { type: "workspaces", attributes: {}, relationships: intoProject(p) } },
    });
    expect(moved.status).toBe(200);
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(409);
  });

  it("racing creates, moves and a delete of the project never leave a workspace in a deleted project", async () => {
    const org = await createOrg();
    const spare = await createWorkspace(org);
    const ids = new Set([spare.id]);
    for (let i = 0; i < 15; i++) {
      const p = await project(org);
      const [created, moved, deleted] = await Promise.all([
        api("POST", `/organizations/${org}/workspaces`, {
          body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") }, relationships: intoProject(p) } },
        }),
        api("PATCH", `/workspaces/${spare.id}`, { body: { data: { type: "workspaces", attributes: {}, relationships: intoProject(p) } } }),
        api("DELETE", `/projects/${p}`),
      ]);
      if (deleted.status === 204) {
        expect([created.status, moved.status]).toEqual([422, 422]);
      } else {
        expect(deleted.status).toBe(409);
      }
      if (moved.status === 200) expect((await api("GET", `/workspaces/${spare.id}`)).body.data.relationships.project.data.id).toBe(p);
      if (created.status === 201) ids.add(created.body.data.id);
    }
    const found = (await api("GET", "/admin/consistency?page%5Bsize%5D=100")).body.data.filter((d: any) => ids.has(d.attributes["workspace-id"]));
    expect(found).toEqual([]);
  });

  it("a create into a project already deleted is refused", async () => {
    const org = await createOrg();
    const p = await project(org);
    expect((await api("DELETE", `/projects/${p}`)).status).toBe(204);
    const res = await api("POST", `/organizations/${org}/workspaces`, {
      body: { data: { type: "workspaces", attributes: { name: uniqueName("ws") }, relationships: intoProject(p) } },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ detail: "Project not found", source: { pointer: "/data/relationships/project/data/id" } });
  });

  it("the checker reports a workspace whose project does not exist", async () => {
    const org = await createOrg();
    const p = await project(org);
    const ws = await createWorkspace(org, {}, undefined, intoProject(p));
    // The state the race left behind: the project row gone while a workspace still points at it.
    await env.DB.prepare("DELETE FROM projects WHERE id = ?").bind(p).run();
    const res = await api("GET", "/admin/consistency?page%5Bsize%5D=100");
    const kinds = res.body.data.filter((d: any) => d.attributes["workspace-id"] === ws.id).map((d: any) => d.attributes.kind);
    expect(kinds).toContain("orphan-project-reference");
  });
});

describe("item 10: stale name leases", () => {
  it("the checker releases a lease whose create never happened, and then reports nothing", async () => {
    const org = await createOrg();
    const id = `ws-${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const name = uniqueName("lost");
    await claimWorkspaceName(org, name, id, Date.now() - 10 * 60_000);
    const kinds = async () =>
      (await api("GET", "/admin/consistency?page%5Bsize%5D=100")).body.data
        .filter((d: any) => d.attributes["workspace-id"] === id)
        .map((d: any) => d.attributes.kind);
    await kinds();
    expect(await kinds()).toEqual([]);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM workspace_names WHERE workspace_id = ?").bind(id).first<{ n: number }>();
    expect(left!.n).toBe(0);
    // The name is free again.
    const ws = await createWorkspace(org, { name });
    expect(ws.attributes.name).toBe(name);
  });
});

describe("remote-state consumers: PATCH with an empty list", () => {
  it("clears the list with 204", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const other = await createWorkspace(org);
    const path = `/workspaces/${ws.id}/relationships/remote-state-consumers`;
    expect((await api("POST", path, { body: { data: [{ type: "workspaces", id: other.id }] } })).status).toBe(204);
    const cleared = await api("PATCH", path, { body: { data: [] } });
    expect(cleared.status).toBe(204);
    expect((await api("GET", path)).body.data).toEqual([]);
    // POST and DELETE still need at least one entry.
    expect((await api("POST", path, { body: { data: [] } })).status).toBe(422);
  });
});
