// Settings the API accepts and what each changes (docs/behaviour.md, "Settings"): a refused value is a 422 that
// changes nothing; an honoured one is shown by its effect.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace } from "../fixtures";
import { api } from "../helpers";
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
