// `include=vars` on workspace reads (the real API's OpenAPI document lists it): the workspace's own variables in
// `included`, as GET /workspaces/:id/vars shows them (a sensitive value never), for callers who may read them.
import { describe, expect, it } from "vitest";
import { api, uniqueName, type ApiResponse } from "../helpers";
import { createOrg, createWorkspace } from "../fixtures";
import { grantWorkspace, makeTeam } from "../fixtures";

const SECRET = "s3cret-value-never-shown";
const key = () => uniqueName("k").replace(/[^A-Za-z0-9_]/g, "_");
async function addVar(ws: string, attributes: Record<string, unknown>): Promise<{ id: string }> {
  const res = await api("POST", `/workspaces/${ws}/vars`, { body: { data: { type: "vars", attributes: { category: "terraform", ...attributes } } } });
  expect(res.status).toBe(201);
  return res.body.data;
}
const includedVars = (res: ApiResponse) => ((res.body.included ?? []) as Array<{ type: string; id: string }>).filter((r) => r.type === "vars");
const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id).sort();

describe("include=vars on workspace reads", () => {
  it("includes the workspace's variables as its vars endpoint shows them, by id, by name and in the list", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    const other = await createWorkspace(org);
    await addVar(ws.id, { key: key(), value: "plain" });
    await addVar(ws.id, { key: key(), value: SECRET, sensitive: true, category: "env" });
    await addVar(other.id, { key: key(), value: "theirs" });
    const own = (await api("GET", `/workspaces/${ws.id}/vars`)).body.data as Array<{ id: string }>;
    const theirs = (await api("GET", `/workspaces/${other.id}/vars`)).body.data as Array<{ id: string }>;

    for (const path of [`/workspaces/${ws.id}?include=vars`, `/organizations/${org}/workspaces/${ws.attributes.name}?include=vars`]) {
      const res = await api("GET", path);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(SECRET);
      // Exactly the resources GET …/vars answers (sensitive value null), each named by the relationship.
      expect(includedVars(res).sort((a, b) => a.id.localeCompare(b.id))).toEqual([...own].sort((a, b) => a.id.localeCompare(b.id)));
      expect(ids(res.body.data.relationships.vars.data)).toEqual(ids(own));
    }
    // With another include, both are served.
    const both = await api("GET", `/workspaces/${ws.id}?include=vars,organization`);
    expect(ids(includedVars(both))).toEqual(ids(own));
    expect(both.body.included.some((r: { type: string }) => r.type === "organizations")).toBe(true);

    const list = await api("GET", `/organizations/${org}/workspaces?include=vars`);
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(SECRET);
    expect(ids(includedVars(list))).toEqual(ids([...own, ...theirs]));
  });

  it("includes nothing for callers who may read the workspace but not its variables", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org);
    await addVar(ws.id, { key: key(), value: "plain" });
    const reader = await makeTeam(org);
    await grantWorkspace(reader.id, ws.id, "read");
    const runsOnly = await makeTeam(org);
    await grantWorkspace(runsOnly.id, ws.id, "custom", { runs: "read", variables: "none" });

    const seen = await api("GET", `/workspaces/${ws.id}?include=vars`, { token: reader.token });
    expect(seen.status).toBe(200);
    expect(includedVars(seen)).toHaveLength(1);

    for (const path of [`/workspaces/${ws.id}?include=vars`, `/organizations/${org}/workspaces?include=vars`]) {
      const res = await api("GET", path, { token: runsOnly.token });
      expect(res.status).toBe(200);
      expect(includedVars(res)).toEqual([]);
      expect(res.text).not.toContain("plain");
    }
  });
});
