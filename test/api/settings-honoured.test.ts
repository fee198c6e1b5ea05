// Settings the API accepts and what each changes (docs/behaviour.md, "Settings"): a refused value is a 422 that
// changes nothing; an honoured one is shown by its effect.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace } from "../fixtures";
import { api, uniqueName } from "../helpers";
import { seedCv } from "../do/runs.helpers";

const runBody = (workspaceId: string, attributes: Record<string, unknown> = {}) => ({
  data: { type: "runs", attributes, relationships: { workspace: { data: { type: "workspaces", id: workspaceId } } } },
});

describe("allow-destroy-plan", () => {
  it("false refuses destroy runs (422, nothing queued) and still takes other runs; true takes them again", async () => {
    const org = await createOrg();
    const ws = await createWorkspace(org, { "allow-destroy-plan": false });
    await seedCv(env.WORKSPACES.getByName(ws.id));
    const refused = await api("POST", "/runs", { body: runBody(ws.id, { "is-destroy": true }) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].source.pointer).toBe("/data/attributes/is-destroy");
    expect(refused.body.errors[0].detail).toMatch(/allow-destroy-plan/);
    expect((await api("GET", `/workspaces/${ws.id}/runs`)).body.data).toEqual([]);

    const plain = await api("POST", "/runs", { body: runBody(ws.id, { "plan-only": true }) });
    expect(plain.status).toBe(201);

    const on = await api("PATCH", `/workspaces/${ws.id}`, { body: { data: { type: "workspaces", attributes: { "allow-destroy-plan": true } } } });
    expect(on.status).toBe(200);
    expect(on.body.data.attributes["can-queue-destroy-plan"]).toBe(true);
    const destroy = await api("POST", "/runs", { body: runBody(ws.id, { "is-destroy": true }) });
    expect(destroy.status).toBe(201);
    expect(destroy.body.data.attributes["is-destroy"]).toBe(true);
  });
});

describe("settings this service cannot honour: switched on, they are refused and nothing changes", () => {
  const hosted = { edition: "hosted" as const };

  it("assessments-enabled: true (hosted edition; no health assessments run here), on create and on update", async () => {
    const org = await createOrg();
    const name = uniqueName("ws");
    const refused = await api("POST", `/organizations/${org}/workspaces`, {
      ...hosted,
      body: { data: { type: "workspaces", attributes: { name, "assessments-enabled": true } } },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ status: "422", source: { pointer: "/data/attributes/assessments-enabled" } });
    expect(refused.body.errors[0].detail).toMatch(/not available/);
    expect((await api("GET", `/organizations/${org}/workspaces/${name}`, hosted)).status).toBe(404);

    const ws = await api("POST", `/organizations/${org}/workspaces`, {
      ...hosted,
      body: { data: { type: "workspaces", attributes: { name, "assessments-enabled": false } } },
    });
    expect(ws.status).toBe(201);
    const again = await api("PATCH", `/workspaces/${ws.body.data.id}`, {
      ...hosted,
      body: { data: { type: "workspaces", attributes: { "assessments-enabled": true, description: "not applied" } } },
    });
    expect(again.status).toBe(422);
    const after = (await api("GET", `/workspaces/${ws.body.data.id}`, hosted)).body.data.attributes;
    expect(after).toMatchObject({ "assessments-enabled": false, description: null });
  });

  for (const key of ["assessments-enforced", "enforce-hyok"]) {
    it(`the organisation's ${key}: true, on create and on update; false is taken`, async () => {
      const name = uniqueName("org");
      const refused = await api("POST", "/organizations", {
        body: { data: { type: "organizations", attributes: { name, email: "a@example.com", [key]: true } } },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.errors[0]).toMatchObject({ status: "422", source: { pointer: `/data/attributes/${key}` } });
      expect((await api("GET", `/organizations/${name}`)).status).toBe(404);

      const org = await createOrg();
      const patch = (attributes: Record<string, unknown>) => api("PATCH", `/organizations/${org}`, { body: { data: { type: "organizations", attributes } } });
      const before = (await api("GET", `/organizations/${org}`)).body.data.attributes;
      const again = await patch({ [key]: true, email: "changed@example.com" });
      expect(again.status).toBe(422);
      expect((await api("GET", `/organizations/${org}`)).body.data.attributes).toEqual(before);
      const off = await patch({ [key]: false });
      expect(off.status).toBe(200);
      expect(off.body.data.attributes["assessments-enforced"]).toBe(false);
    });
  }
});
