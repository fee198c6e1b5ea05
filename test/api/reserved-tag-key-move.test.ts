// A key reserved with disable-overrides may not be bound on a workspace whose project binds it; moving a workspace
// that binds the key into such a project is refused the same way (422), and nothing moves.
import { describe, expect, it } from "vitest";
import { api, uniqueName } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";

async function project(org: string, bindings: Array<[string, string]> = []): Promise<string> {
  const res = await api("POST", `/organizations/${org}/projects`, { body: { data: { type: "projects", attributes: { name: uniqueName("prj") } } } });
  expect(res.status).toBe(201);
  if (bindings.length) {
    const b = await api("PATCH", `/projects/${res.body.data.id}/tag-bindings`, { body: { data: kv(bindings) } });
    expect(b.status).toBe(200);
  }
  return res.body.data.id;
}
const kv = (pairs: Array<[string, string]>) => pairs.map(([key, value]) => ({ type: "tag-bindings", attributes: { key, value } }));
const reserve = (org: string, key: string, disableOverrides: boolean) =>
  api("POST", `/organizations/${org}/reserved-tag-keys`, {
    body: { data: { type: "reserved-tag-keys", attributes: { key, "disable-overrides": disableOverrides } } },
  });
const move = (path: string, projectId: string, relationships: Record<string, unknown> = {}) =>
  api("PATCH", path, {
    body: { data: { type: "workspaces", attributes: {}, relationships: { project: { data: { type: "projects", id: projectId } }, ...relationships } } },
  });
const pairs = (r: { body: { data: Array<{ attributes: { key: string; value: string } }> } }) => r.body.data.map((b) => [b.attributes.key, b.attributes.value]);

describe("moving a workspace into a project that binds a key reserved with disable-overrides", () => {
  it("is refused (422, the project relationship to blame) by id and by name; the workspace stays where it was", async () => {
    const org = await createOrg();
    const locked = await project(org, [["env", "prod"]]);
    expect((await reserve(org, "env", true)).status).toBe(201);
    const ws = await createWorkspace(org);
    const home = ws.relationships.project.data.id;
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["env", "dev"]]) } })).status).toBe(200);

    for (const path of [`/workspaces/${ws.id}`, `/organizations/${org}/workspaces/${ws.attributes.name}`]) {
      const res = await move(path, locked);
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toEqual({
        status: "422",
        title: "invalid attribute",
        detail: "Key env is reserved with overrides disabled: the workspace cannot override the value its project sets",
        source: { pointer: "/data/relationships/project/data/id" },
      });
    }
    const after = await api("GET", `/workspaces/${ws.id}`);
    expect(after.body.data.relationships.project.data.id).toBe(home);
    expect(pairs(await api("GET", `/workspaces/${ws.id}/tag-bindings`))).toEqual([["env", "dev"]]);
  });

  it("allows the move when the request replaces the bindings without the key, or nothing is locked", async () => {
    const org = await createOrg();
    const locked = await project(org, [["env", "prod"]]);
    const open = await project(org, [["team", "a"]]);
    expect((await reserve(org, "env", true)).status).toBe(201);
    expect((await reserve(org, "team", false)).status).toBe(201);

    // The same request replaces the bindings: the ones it writes are checked, not the ones it drops.
    const ws = await createWorkspace(org);
    expect((await api("PATCH", `/workspaces/${ws.id}/tag-bindings`, { body: { data: kv([["env", "dev"]]) } })).status).toBe(200);
    const replaced = await move(`/workspaces/${ws.id}`, locked, { "tag-bindings": { data: kv([["owner", "x"]]) } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data.relationships.project.data.id).toBe(locked);
    const eff = await api("GET", `/workspaces/${ws.id}/effective-tag-bindings`);
    expect(pairs(eff).sort()).toEqual([
      ["env", "prod"],
      ["owner", "x"],
    ]);

    // A key reserved without disable-overrides, and a key the destination does not bind, refuse nothing.
    const other = await createWorkspace(org);
    expect((await api("PATCH", `/workspaces/${other.id}/tag-bindings`, { body: { data: kv([["team", "b"]]) } })).status).toBe(200);
    expect((await move(`/workspaces/${other.id}`, open)).status).toBe(200);
    expect((await move(`/workspaces/${other.id}`, locked)).status).toBe(200);
    expect((await api("GET", `/workspaces/${other.id}`)).body.data.relationships.project.data.id).toBe(locked);
  });
});
